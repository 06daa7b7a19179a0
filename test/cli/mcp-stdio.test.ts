import type { ChildProcess } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult, Progress } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type Account, call, registerAccount } from '../helpers/http.js';
import { mainCommand } from '../helpers/main-command.js';
import { createPause, eventually, tokenOf } from '../helpers/pauses.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { cleanEnv, ROOT, runCli } from './run-cli.js';

// `pausepoint mcp`: the real command (test/helpers/main-command.ts) started by the
// MCP SDK's own stdio Client, as Claude Desktop or Cursor start it, against
// a real service; a person answers through the response endpoint. The same
// tools over HTTP: test/e2e/mcp/streamable-http.test.ts.

vi.setConfig({ testTimeout: 60_000 });

let service: TestService;
let dev: Account;
let client: Client;
const clients: Client[] = [];

/** Starts `pausepoint mcp` with this key and connects to it. */
async function startMcp(key: string, extraEnv: Record<string, string> = {}) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [...mainCommand(), 'mcp'],
    env: cleanEnv({ PAUSEPOINT_API_KEY: key, PAUSEPOINT_BASE_URL: service.url, ...extraEnv }),
    cwd: ROOT,
    stderr: 'pipe',
  });
  const stderr: string[] = [];
  transport.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
  const mcp = new Client({ name: 'pausepoint-test', version: '1.0.0' });
  await mcp.connect(transport);
  clients.push(mcp);
  return { client: mcp, transport, stderr };
}

beforeAll(async () => {
  service = await startTestService();
  dev = await registerAccount(service.url);
  ({ client } = await startMcp(dev.test));
}, 90_000);
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await service?.destroy();
});

/** Calls a tool, collecting its progress notifications. */
function callTool(on: Client, name: string, args: Record<string, unknown> = {}) {
  const progress: Progress[] = [];
  const result = on.callTool({ name, arguments: args }, undefined, {
    onprogress: (update) => progress.push(update),
    resetTimeoutOnProgress: true,
  }) as Promise<CallToolResult>;
  return { result, progress };
}

const structured = <T = Record<string, any>>(result: CallToolResult) => {
  expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
  return result.structuredContent as T;
};
const textOf = (result: CallToolResult) =>
  result.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');

async function answer(responseUrl: string, choice: string) {
  const reply = await call(service.url, 'POST', `/v1/respond/${tokenOf({ response_url: responseUrl })}`, {
    body: { choice },
  });
  expect(reply.status, reply.text).toBe(200);
}

describe('pausepoint mcp over stdio', () => {
  it('lists the four tools with their schemas', async () => {
    expect(client.getServerVersion()?.name).toBe('pausepoint');
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual([
      'ask_human',
      'cancel_question',
      'list_pending_questions',
      'wait_for_human',
    ]);
    const ask = tools.find((tool) => tool.name === 'ask_human')!;
    expect(ask.inputSchema.required).toEqual(['question']);
    expect(ask.inputSchema.properties).toHaveProperty('reviewers');
    expect(ask.outputSchema?.properties).toHaveProperty('status');
    expect(ask.annotations).toMatchObject({ openWorldHint: true });
  });

  it('ask_human: answered through the response page within the wait, with progress meanwhile', async () => {
    const asking = callTool(client, 'ask_human', {
      question: 'Deploy v2 to production?',
      timeout_default: 'reject',
      wait_seconds: 30,
    });
    await eventually(() => expect(asking.progress.length).toBeGreaterThan(0), 15_000);
    const [, link] = /answer at (\S+)/.exec(asking.progress[0]!.message ?? '') ?? [];
    await answer(link!, 'approve');
    expect(structured(await asking.result)).toMatchObject({
      status: 'responded',
      choice: 'approve',
      question: 'Deploy v2 to production?',
    });
  });

  it('ask_human pending at the end of a short wait; wait_for_human later gets the answer', async () => {
    const pending = structured(await callTool(client, 'ask_human', { question: 'Merge?', wait_seconds: 1 }).result);
    expect(pending).toMatchObject({ status: 'pending', choice: null });
    const waiting = callTool(client, 'wait_for_human', { pause_id: pending.pause_id, wait_seconds: 30 });
    await eventually(() => expect(waiting.progress.length).toBeGreaterThan(0), 15_000);
    await answer(pending.response_url, 'reject');
    expect(structured(await waiting.result)).toMatchObject({
      pause_id: pending.pause_id,
      status: 'responded',
      choice: 'reject',
    });
  });

  it('ask_human with fields: the form goes through the API, and the outcome carries the values the human edited', async () => {
    const pending = structured(
      await callTool(client, 'ask_human', {
        question: 'Refund order #7?',
        fields: { amount: { type: 'number', minimum: 0 } },
        required: ['amount'],
        values: { amount: 70 },
        wait_seconds: 0,
      }).result,
    );
    const reply = await call(service.url, 'POST', `/v1/respond/${tokenOf(pending as { response_url: string })}`, {
      body: { choice: 'approve', values: { amount: 35 } },
    });
    expect(reply.status, reply.text).toBe(200);
    const done = await callTool(client, 'wait_for_human', { pause_id: pending.pause_id, wait_seconds: 5 }).result;
    expect(structured(done)).toMatchObject({ choice: 'approve', values: { amount: 35 }, edited: true });
    expect(textOf(done)).toContain('changed from the ones proposed: {"amount":35}');

    const refused = await callTool(client, 'ask_human', {
      question: 'Refund?',
      fields: { amount: { type: 'number', maximum: 10 } },
      values: { amount: 70 },
      wait_seconds: 0,
    }).result;
    expect(textOf(refused)).toBe('invalid_form: Invalid request: values.amount must be at most 10.');
  });

  it('cancel_question, and the API’s error code on a second cancel', async () => {
    const asked = structured(
      await callTool(client, 'ask_human', { question: 'Drop the table?', wait_seconds: 0 }).result,
    );
    const listed = structured(await callTool(client, 'list_pending_questions').result);
    expect(listed.questions.map((q: { pause_id: string }) => q.pause_id)).toContain(asked.pause_id);
    expect(structured(await callTool(client, 'cancel_question', { pause_id: asked.pause_id }).result)).toMatchObject({
      status: 'cancelled',
    });
    const again = await callTool(client, 'cancel_question', { pause_id: asked.pause_id }).result;
    expect(again.isError).toBe(true);
    expect(textOf(again)).toBe('pause_not_pending: The pause is already cancelled.');
  });

  it('a test key never reaches live pauses', async () => {
    const live = await createPause(service.url, dev.live, { title: 'Live one' });
    const waited = await callTool(client, 'wait_for_human', { pause_id: live.id, wait_seconds: 0 }).result;
    expect(waited.isError).toBe(true);
    expect(textOf(waited)).toBe('not_found: Pause not found.');
    const cancelled = await callTool(client, 'cancel_question', { pause_id: live.id }).result;
    expect(textOf(cancelled)).toBe('not_found: Pause not found.');
    expect(JSON.stringify(structured(await callTool(client, 'list_pending_questions').result))).not.toContain(live.id);
  });

  it('a long ask with a short expiry returns the timeout; the late answer is refused', async () => {
    const startedAt = Date.now();
    const done = structured(
      await callTool(client, 'ask_human', { question: 'Pay the invoice?', expires_in: 2, wait_seconds: 50 }).result,
    );
    expect(done).toMatchObject({ status: 'timed_out', choice: null });
    expect(Date.now() - startedAt).toBeLessThan(10_000);
    const late = await call(service.url, 'POST', `/v1/respond/${tokenOf(done as { response_url: string })}`, {
      body: { choice: 'approve' },
    });
    expect(late.status).toBe(410);
  });

  it('a bad key is an auth error on every tool call, with the code and message', async () => {
    const { client: bad, stderr } = await startMcp(`svc_test_${'0'.repeat(48)}`);
    const result = await callTool(bad, 'list_pending_questions').result;
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe('unauthorized: The API key is invalid or has been rotated.');
    // Not an unexpected error: nothing to report on stderr.
    expect(stderr.join('')).toBe('');
  });

  it('ends when its client goes, even mid-wait', async () => {
    const { client: leaving, transport } = await startMcp(dev.test);
    const asking = callTool(leaving, 'ask_human', { question: 'Still there?', wait_seconds: 50 });
    asking.result.catch(() => {}); // rejected by the close below
    await eventually(() => expect(asking.progress.length).toBeGreaterThan(0), 15_000);
    const pid = transport.pid!;
    // The client going is its stdin ending; no signal is sent here (the SDK's
    // close() would send SIGTERM after 2 s, which a loaded machine can reach).
    const child = (transport as unknown as { _process: ChildProcess })._process;
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.once('exit', (code, signal) => resolve({ code, signal })),
    );
    child.stdin!.end();
    expect(await exited).toEqual({ code: 0, signal: null });
    expect(() => process.kill(pid, 0)).toThrow();
    await leaving.close();
  });

  it('without a key says so on stderr and exits 1, writing nothing on stdout', async () => {
    const result = await runCli(['mcp'], { PAUSEPOINT_BASE_URL: service.url });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/No API key: set PAUSEPOINT_API_KEY or pass --api-key/);
  });
});
