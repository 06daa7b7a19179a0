import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult, Progress } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type Account, call, registerAccount } from '../../helpers/http.js';
import { createPause, eventually, sleep, tokenOf } from '../../helpers/pauses.js';
import { startTestService, type TestService } from '../../helpers/service.js';

// MCP over Streamable HTTP at /mcp, driven by the MCP SDK's own Client
// against a real service; a person answers through the response endpoint.
// The same tools over stdio: test/cli/mcp-stdio.test.ts.

vi.setConfig({ testTimeout: 60_000 });

let service: TestService;
let dev: Account;
const clients: Client[] = [];

beforeAll(async () => {
  service = await startTestService();
  dev = await registerAccount(service.url);
});
afterAll(async () => {
  await Promise.all(clients.map((client) => client.close()));
  await service?.destroy();
});

async function connect(key: string, url = service.url): Promise<Client> {
  const client = new Client({ name: 'pausepoint-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
  });
  await client.connect(transport);
  clients.push(client);
  return client;
}

interface Outcome {
  pause_id: string;
  status: string;
  question: string;
  choice: string | null;
  text: string | null;
  responded_by: { id: string; email: string; name: string | null } | null;
  response_url: string | null;
  expires_at: string;
}

/** Calls a tool, collecting its progress notifications. */
async function callTool(client: Client, name: string, args: Record<string, unknown> = {}, signal?: AbortSignal) {
  const progress: Array<Progress & { at: number }> = [];
  const result = client.callTool({ name, arguments: args }, undefined, {
    onprogress: (update) => progress.push({ ...update, at: Date.now() }),
    resetTimeoutOnProgress: true,
    signal,
  }) as Promise<CallToolResult>;
  return { result, progress };
}

const outcomeOf = (result: CallToolResult) => {
  expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
  return result.structuredContent as unknown as Outcome;
};
const textOf = (result: CallToolResult) =>
  result.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');

async function answer(responseUrl: string, choice: string, text?: string) {
  const reply = await call(service.url, 'POST', `/v1/respond/${tokenOf({ response_url: responseUrl })}`, {
    body: text === undefined ? { choice } : { choice, text },
  });
  expect(reply.status, reply.text).toBe(200);
}

/** The MCP tool calls running on the service, from its metrics. */
async function callsInFlight(tool: string): Promise<number> {
  const text = (await call(service.url, 'GET', '/metrics')).text;
  const line = text.split('\n').find((l) => l.startsWith(`pausepoint_mcp_tool_calls_in_flight{tool="${tool}"} `));
  return Number(line?.split(' ')[1] ?? 0);
}

describe('tools', () => {
  it('lists the four tools with schemas an LLM can read and annotations', async () => {
    const client = await connect(dev.test);
    expect(client.getServerVersion()?.name).toBe('pausepoint');
    expect(client.getInstructions()).toMatch(/wait_for_human/);
    const { tools } = await client.listTools();
    const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]));
    expect(Object.keys(byName).sort()).toEqual([
      'ask_human',
      'cancel_question',
      'list_pending_questions',
      'wait_for_human',
    ]);

    const ask = byName.ask_human!;
    expect(ask.inputSchema.required).toEqual(['question']);
    const properties = ask.inputSchema.properties as Record<string, Record<string, unknown>>;
    expect(Object.keys(properties).sort()).toEqual(
      [
        'question',
        'details',
        'options',
        'allow_text',
        'reviewers',
        'quorum',
        'expires_in',
        'timeout_default',
        'fields',
        'required',
        'values',
        'submit_options',
        'wait_seconds',
      ].sort(),
    );
    for (const [name, property] of Object.entries(properties)) {
      expect(property.description, name).toMatch(/\w{3,}/);
    }
    expect(properties.question).toMatchObject({ type: 'string', minLength: 1, maxLength: 200 });
    expect(properties.wait_seconds).toMatchObject({ type: 'integer', minimum: 0, maximum: 55, default: 50 });
    expect(ask.outputSchema?.properties).toHaveProperty('pause_id');
    expect(ask.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false, openWorldHint: true });
    expect(ask.description).toMatch(/pending.*wait_for_human/s);

    expect(byName.wait_for_human!.inputSchema.required).toEqual(['pause_id']);
    expect(byName.wait_for_human!.annotations).toMatchObject({ readOnlyHint: true, idempotentHint: true });
    expect(byName.cancel_question!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    expect(byName.list_pending_questions!.annotations).toMatchObject({ readOnlyHint: true });
    expect(byName.list_pending_questions!.outputSchema?.properties).toHaveProperty('questions');
  });

  it('ask_human: a human answers within the wait, while progress arrives with the link', async () => {
    const client = await connect(dev.test);
    const startedAt = Date.now();
    const { result, progress } = await callTool(client, 'ask_human', {
      question: 'Refund $120 to order #4411?',
      details: 'The customer says the parcel never arrived.',
      allow_text: true,
      wait_seconds: 30,
    });
    // The first progress notification comes at once and carries the link to answer at.
    await eventually(() => expect(progress.length).toBeGreaterThan(0), 10_000);
    const [, link] = /answer at (\S+)/.exec(progress[0]!.message ?? '') ?? [];
    expect(link).toMatch(/\/r\//);
    await answer(link!, 'approve', 'fine, just this once');

    const done = await result;
    const outcome = outcomeOf(done);
    expect(outcome).toMatchObject({
      status: 'responded',
      question: 'Refund $120 to order #4411?',
      choice: 'approve',
      text: 'fine, just this once',
      responded_by: null,
      response_url: link,
    });
    expect(textOf(done)).toMatch(/The human chose "approve", and wrote "fine, just this once"/);
    expect(Date.now() - startedAt).toBeLessThan(10_000);

    const pause = (await call(service.url, 'GET', `/v1/pause/${outcome.pause_id}`, { token: dev.test })).body;
    expect(pause).toMatchObject({
      mode: 'test',
      title: 'Refund $120 to order #4411?',
      body: 'The customer says the parcel never arrived.',
      allow_text: true,
      options: ['approve', 'reject'],
    });
  });

  it('ask_human still pending after its wait, with progress every few seconds; wait_for_human gets the answer', async () => {
    const client = await connect(dev.test);
    const startedAt = Date.now();
    const asked = await callTool(client, 'ask_human', {
      question: 'Merge PR #212?',
      options: ['merge', 'hold'],
      wait_seconds: 6,
    });
    const pending = await asked.result;
    const elapsed = Date.now() - startedAt;
    expect(elapsed).toBeGreaterThanOrEqual(5900);
    expect(elapsed).toBeLessThan(15_000);
    const outcome = outcomeOf(pending);
    expect(outcome).toMatchObject({ status: 'pending', choice: null, text: null, question: 'Merge PR #212?' });
    expect(outcome.response_url).toMatch(/\/r\//);
    expect(textOf(pending)).toContain(`Call wait_for_human with pause_id "${outcome.pause_id}"`);
    // At once, then every 5 s, with growing progress out of the wait's total.
    expect(asked.progress.length).toBeGreaterThanOrEqual(2);
    expect(asked.progress[0]).toMatchObject({ progress: 0, total: 6 });
    expect(asked.progress[1]!.progress).toBeGreaterThan(asked.progress[0]!.progress);
    expect(asked.progress[1]!.message).toMatch(/Still waiting/);
    expect(asked.progress[1]!.at - asked.progress[0]!.at).toBeGreaterThanOrEqual(4500);

    const waiting = await callTool(client, 'wait_for_human', { pause_id: outcome.pause_id, wait_seconds: 30 });
    await eventually(() => expect(waiting.progress.length).toBeGreaterThan(0), 10_000);
    await answer(outcome.response_url!, 'hold');
    expect(outcomeOf(await waiting.result)).toMatchObject({
      pause_id: outcome.pause_id,
      status: 'responded',
      choice: 'hold',
    });
  });

  it('cancel_question withdraws a pending question; a second cancel is a tool error with the code', async () => {
    const client = await connect(dev.test);
    const asked = outcomeOf(
      await (await callTool(client, 'ask_human', { question: 'Wipe staging?', wait_seconds: 0 })).result,
    );
    expect(asked.status).toBe('pending');

    const listed = await (await callTool(client, 'list_pending_questions')).result;
    expect(listed.isError).toBeFalsy();
    const pending = (listed.structuredContent as { questions: Array<{ pause_id: string; question: string }> })
      .questions;
    expect(pending).toContainEqual(expect.objectContaining({ pause_id: asked.pause_id, question: 'Wipe staging?' }));

    const cancelled = await (await callTool(client, 'cancel_question', { pause_id: asked.pause_id })).result;
    expect(outcomeOf(cancelled)).toMatchObject({ status: 'cancelled', choice: null });
    expect(textOf(cancelled)).toMatch(/cancelled.*not an approval/);

    const again = await (await callTool(client, 'cancel_question', { pause_id: asked.pause_id })).result;
    expect(again.isError).toBe(true);
    expect(textOf(again)).toBe('pause_not_pending: The pause is already cancelled.');

    const after = await (await callTool(client, 'list_pending_questions')).result;
    expect(JSON.stringify(after.structuredContent)).not.toContain(asked.pause_id);
    // Waiting on a cancelled question answers at once.
    const waited = await (await callTool(client, 'wait_for_human', { pause_id: asked.pause_id })).result;
    expect(outcomeOf(waited).status).toBe('cancelled');
  });

  it('a question that expires while the agent waits comes back timed out with its default', async () => {
    const client = await connect(dev.test);
    const startedAt = Date.now();
    const { result } = await callTool(client, 'ask_human', {
      question: 'Send the newsletter?',
      expires_in: 1,
      timeout_default: 'reject',
      wait_seconds: 30,
    });
    const done = await result;
    expect(outcomeOf(done)).toMatchObject({ status: 'timed_out', choice: 'reject' });
    expect(textOf(done)).toMatch(/default outcome applies: "reject"/);
    expect(Date.now() - startedAt).toBeLessThan(8000);
  });

  it('reports the API’s rules as tool errors naming the tool’s fields', async () => {
    const client = await connect(dev.test);
    const duplicate = await (
      await callTool(client, 'ask_human', { question: 'Pick one', options: ['a', 'a'], wait_seconds: 0 })
    ).result;
    expect(duplicate.isError).toBe(true);
    expect(textOf(duplicate)).toMatch(/^invalid_request: Invalid request: options must not repeat an item/);

    // A shape error and a rule that spans fields, in one answer.
    const both = await (
      await callTool(client, 'ask_human', { question: 'Pick one', options: ['a', 'a'], quorum: 2, wait_seconds: 0 })
    ).result;
    expect(textOf(both)).toBe(
      'invalid_request: Invalid request: options must not repeat an item (options.0 and options.1 are the same); quorum needs reviewers.',
    );

    const badDefault = await (
      await callTool(client, 'ask_human', { question: 'Pick one', timeout_default: 'maybe', wait_seconds: 0 })
    ).result;
    expect(textOf(badDefault)).toBe('invalid_request: Invalid request: timeout_default must be one of the options.');

    const badEmail = await (
      await callTool(client, 'ask_human', { question: 'Pick one', reviewers: [{ email: 'nobody' }], wait_seconds: 0 })
    ).result;
    expect(textOf(badEmail)).toMatch(/reviewers\.0\.email must be an email address/);

    const tooLong = await (await callTool(client, 'ask_human', { question: 'x'.repeat(201) })).result;
    expect(tooLong.isError).toBe(true);
    expect(textOf(tooLong)).toMatch(/question/);

    const tooLongWait = await (await callTool(client, 'wait_for_human', { pause_id: 'pau_x', wait_seconds: 56 }))
      .result;
    expect(tooLongWait.isError).toBe(true);
    expect(textOf(tooLongWait)).toMatch(/wait_seconds/);

    const unknown = await (await callTool(client, 'wait_for_human', { pause_id: 'pau_nope', wait_seconds: 0 })).result;
    expect(textOf(unknown)).toBe('not_found: Pause not found.');
  });

  it('asks named reviewers, and says who decided', async () => {
    const client = await connect(dev.test);
    const asked = outcomeOf(
      await (
        await callTool(client, 'ask_human', {
          question: 'Rotate the production database password?',
          reviewers: [
            { email: 'ana@example.com', name: 'Ana' },
            { email: 'bo@example.com', name: 'Bo' },
          ],
          quorum: 1,
          wait_seconds: 0,
        })
      ).result,
    );
    expect(asked).toMatchObject({ status: 'pending', response_url: null });
    // Each reviewer has a link of their own (test mode sends no email): the API shows them to the developer.
    const pause = (await call(service.url, 'GET', `/v1/pause/${asked.pause_id}`, { token: dev.test })).body;
    const bo = pause.reviewers.find((r: { email: string }) => r.email === 'bo@example.com');
    await answer(bo.response_url, 'approve');
    const decided = await (await callTool(client, 'wait_for_human', { pause_id: asked.pause_id })).result;
    expect(outcomeOf(decided)).toMatchObject({
      status: 'responded',
      choice: 'approve',
      responded_by: { id: bo.id, email: 'bo@example.com', name: 'Bo' },
    });
    expect(textOf(decided)).toMatch(/decided by Bo/);
  });
});

describe('keys', () => {
  it('a test key never reaches live pauses, and a live key sees only live ones', async () => {
    const live = await createPause(service.url, dev.live, { title: 'Live question' });
    const testClient = await connect(dev.test);
    for (const [tool, args] of [
      ['wait_for_human', { pause_id: live.id, wait_seconds: 0 }],
      ['cancel_question', { pause_id: live.id }],
    ] as const) {
      const result = await (await callTool(testClient, tool, args)).result;
      expect(result.isError, tool).toBe(true);
      expect(textOf(result)).toBe('not_found: Pause not found.');
    }
    const testList = await (await callTool(testClient, 'list_pending_questions')).result;
    expect(JSON.stringify(testList.structuredContent)).not.toContain(live.id);

    const liveClient = await connect(dev.live);
    const liveList = await (await callTool(liveClient, 'list_pending_questions')).result;
    const ids = (liveList.structuredContent as { questions: Array<{ pause_id: string }> }).questions.map(
      (q) => q.pause_id,
    );
    expect(ids).toEqual([live.id]);
    expect((await call(service.url, 'GET', `/v1/pause/${live.id}`, { token: dev.live })).body.status).toBe('pending');
  });

  it('a bad key, no key or a login session is a 401 the client sees', async () => {
    await expect(connect(`svc_test_${'0'.repeat(48)}`)).rejects.toMatchObject({
      code: 401,
      message: expect.stringMatching(/unauthorized.*The API key is invalid or has been rotated/),
    });
    const noKey = await call(service.url, 'POST', '/mcp', {
      body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      headers: { accept: 'application/json, text/event-stream' },
    });
    expect(noKey.status).toBe(401);
    expect(noKey.body.error.code).toBe('unauthorized');

    const login = await call(service.url, 'POST', '/v1/auth/login', {
      body: { email: dev.email, password: dev.password },
    });
    await expect(connect(login.body.session.token)).rejects.toMatchObject({ code: 401 });
  });
});

describe('the endpoint', () => {
  it('is stateless: GET and DELETE are 405; any POST is served on its own', async () => {
    for (const method of ['GET', 'DELETE']) {
      const reply = await call(service.url, method, '/mcp', {
        token: dev.test,
        headers: { accept: 'text/event-stream' },
      });
      expect(reply.status, method).toBe(405);
      expect(reply.headers.get('allow')).toBe('POST');
      expect(reply.body.error.code).toBe('method_not_allowed');
    }
    // A tools/call with no initialize before it, as another instance would get it.
    const reply = await call(service.url, 'POST', '/mcp', {
      token: dev.test,
      body: { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'list_pending_questions', arguments: {} } },
      headers: { accept: 'application/json, text/event-stream' },
    });
    expect(reply.status).toBe(200);
    expect(reply.headers.get('mcp-session-id')).toBeNull();
    expect(reply.headers.get('x-request-id')).toMatch(/^req_/);
    expect(reply.text).toMatch(/"id":7/);
    expect(reply.text).toContain('structuredContent');
  });

  it('refuses a body over 1 MiB and unsafe text, as the API does', async () => {
    const big = await call(service.url, 'POST', '/mcp', {
      token: dev.test,
      rawBody: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(1024 * 1024) } }),
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    });
    expect(big.status).toBe(413);
    const nul = await call(service.url, 'POST', '/mcp', {
      token: dev.test,
      body: {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'ask_human', arguments: { question: 'a\u0000b' } },
      },
      headers: { accept: 'application/json, text/event-stream' },
    });
    expect(nul.status).toBe(400);
    expect(nul.body.error.code).toBe('invalid_request');
  });

  it('is rate limited with the API, per key', async () => {
    const limited = await startTestService({ env: { API_RATE_LIMIT: '3/60' } });
    try {
      const account = await registerAccount(limited.url);
      const client = await connect(account.test, limited.url); // initialize, initialized notification, GET: 3
      await expect(client.listTools()).rejects.toMatchObject({ code: 429 });
      const other = await call(limited.url, 'GET', '/v1/pause', { token: account.test });
      expect(other.status).toBe(429);
    } finally {
      await limited.destroy();
    }
  });
});

describe('no hung request', () => {
  it('a client that goes away mid-wait ends its call on the server', async () => {
    const client = await connect(dev.test);
    const asking = await callTool(client, 'ask_human', { question: 'Anyone there?', wait_seconds: 50 });
    asking.result.catch(() => {}); // rejected by the close below
    await eventually(() => expect(asking.progress.length).toBeGreaterThan(0), 10_000);
    expect(await callsInFlight('ask_human')).toBe(1);
    await client.close();
    // The wait ended on the server, not just the connection.
    await eventually(async () => expect(await callsInFlight('ask_human')).toBe(0), 3000);
    expect(service.logs.filter((line) => /"level":5\d/.test(line))).toEqual([]);
  });

  it('a long ask with a short expiry and a late answer leaves nothing waiting', async () => {
    const client = await connect(dev.test);
    const { result } = await callTool(client, 'ask_human', {
      question: 'Approve the invoice?',
      expires_in: 2,
      wait_seconds: 50,
    });
    const done = outcomeOf(await result);
    expect(done).toMatchObject({ status: 'timed_out', choice: null });
    expect(textOf(await result)).toMatch(/no default outcome: this is not an approval/);
    // The human comes back too late.
    const late = await call(service.url, 'POST', `/v1/respond/${tokenOf({ response_url: done.response_url! })}`, {
      body: { choice: 'approve' },
    });
    expect(late.status).toBe(410);
    expect(await callsInFlight('ask_human')).toBe(0);
  });

  it('a shutdown answers a waiting call with the question as it stands, and stops promptly', async () => {
    const lone = await startTestService();
    const account = await registerAccount(lone.url);
    const client = await connect(account.test, lone.url);
    const asking = await callTool(client, 'ask_human', { question: 'Still there?', wait_seconds: 50 });
    await eventually(() => expect(asking.progress.length).toBeGreaterThan(0), 10_000);
    await sleep(200);
    const stoppingAt = Date.now();
    const stopped = lone.destroy();
    const outcome = outcomeOf(await asking.result);
    expect(outcome.status).toBe('pending');
    expect(Date.now() - stoppingAt).toBeLessThan(1500);
    await stopped;
    // Not the 5 s grace period's cut: nothing held the server open.
    expect(Date.now() - stoppingAt).toBeLessThan(4000);
  });
});
