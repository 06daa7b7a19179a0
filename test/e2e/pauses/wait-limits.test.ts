import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type Account, call, registerAccount } from '../../helpers/http.js';
import { createPause, eventually, tokenOf } from '../../helpers/pauses.js';
import { startTestService, type TestService } from '../../helpers/service.js';

// What one API key can hold of the service: a cap on its concurrent waits
// (MAX_WAITS_PER_KEY) across the long-poll and the MCP tools, every message
// of an MCP batch counted against its rate limit, and many waits at once all
// answered when their pauses are.

vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });

const MCP_HEADERS = { accept: 'application/json, text/event-stream' };

async function connect(service: TestService, key: string): Promise<Client> {
  const client = new Client({ name: 'pausepoint-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${service.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    }),
  );
  return client;
}

const answer = (service: TestService, pause: { response_url: string | null }) =>
  call(service.url, 'POST', `/v1/respond/${tokenOf(pause)}`, { body: { choice: 'approve' } });

/** A long-poll on the pause, with how long it took. */
async function longPoll(service: TestService, key: string, pauseId: string, wait = 30) {
  const startedAt = Date.now();
  const reply = await call(service.url, 'GET', `/v1/pause/${pauseId}?wait=${wait}`, { token: key });
  expect(reply.status, reply.text).toBe(200);
  return {
    status: reply.body.status as string,
    choice: reply.body.response?.choice as string | undefined,
    ms: Date.now() - startedAt,
  };
}

/** The waits the service holds for keys now (each held one is waiting). */
const waitsHeld = (service: TestService) => service.app.services.waiters.waitSlotsHeld;

describe('the cap on concurrent waits per key', () => {
  let service: TestService;
  let dev: Account;
  beforeAll(async () => {
    service = await startTestService({ env: { MAX_WAITS_PER_KEY: '3' } });
    dev = await registerAccount(service.url);
  });
  afterAll(() => service?.destroy());

  it('answers a wait over the cap at once with the pause still pending, on the API and MCP alike, and frees a slot when a wait ends', async () => {
    const pauses = await Promise.all(Array.from({ length: 5 }, () => createPause(service.url, dev.test)));
    const [p0, p1, p2, p3, p4] = pauses;
    const client = await connect(service, dev.test);
    // Three waits: two long-polls and one MCP wait_for_human.
    const first = longPoll(service, dev.test, p0.id);
    const second = longPoll(service, dev.test, p1.id);
    const viaMcp = client.callTool({
      name: 'wait_for_human',
      arguments: { pause_id: p2.id, wait_seconds: 30 },
    }) as Promise<CallToolResult>;
    await eventually(() => expect(waitsHeld(service)).toBe(3), 15_000);

    // Over the cap: the long-poll, wait_for_human and ask_human's wait all answer at once, pending.
    const over = await longPoll(service, dev.test, p3.id);
    expect(over.status).toBe('pending');
    expect(over.ms).toBeLessThan(10_000);
    const startedAt = Date.now();
    const overMcp = (await client.callTool({
      name: 'wait_for_human',
      arguments: { pause_id: p3.id, wait_seconds: 30 },
    })) as CallToolResult;
    expect(overMcp.structuredContent).toMatchObject({ pause_id: p3.id, status: 'pending' });
    const asked = (await client.callTool({
      name: 'ask_human',
      arguments: { question: 'Over the cap?', wait_seconds: 30 },
    })) as CallToolResult;
    expect(asked.structuredContent).toMatchObject({ status: 'pending' });
    expect(Date.now() - startedAt).toBeLessThan(10_000);

    // Another key of the same developer has caps of its own.
    const otherKey = longPoll(service, dev.live, (await createPause(service.url, dev.live)).id, 1);
    expect((await otherKey).ms).toBeGreaterThanOrEqual(900);

    // The waits held are answered as their pauses are; each frees its slot.
    expect((await answer(service, p0)).status).toBe(200);
    expect((await first).status).toBe('responded');
    await eventually(() => expect(waitsHeld(service)).toBe(2), 15_000);
    // Now a new wait waits: it sees the answer given while it waits.
    const fourth = longPoll(service, dev.test, p4.id);
    await eventually(() => expect(waitsHeld(service)).toBe(3), 15_000);
    expect((await answer(service, p4)).status).toBe(200);
    expect((await fourth).status).toBe('responded');

    for (const pause of [p1, p2]) expect((await answer(service, pause)).status).toBe(200);
    expect((await second).status).toBe('responded');
    expect((await viaMcp).structuredContent).toMatchObject({ status: 'responded', choice: 'approve' });
    await eventually(() => expect(waitsHeld(service)).toBe(0), 15_000);
    await client.close();
  });

  it('counts the events long-poll too, and gives its slot back when the client goes away', async () => {
    const since = new Date().toISOString();
    const path = `/v1/events?wait=30&since=${encodeURIComponent(since)}`;
    const held = [0, 1, 2].map(() => {
      const gone = new AbortController();
      const reply = call(service.url, 'GET', path, { token: dev.test, signal: gone.signal }).catch(() => undefined);
      return { gone, reply };
    });
    await eventually(() => expect(waitsHeld(service)).toBe(3), 15_000);
    // Over the cap: answered at once, with no events.
    const startedAt = Date.now();
    const over = await call(service.url, 'GET', path, { token: dev.test });
    expect(over.status, over.text).toBe(200);
    expect(over.body.data).toEqual([]);
    expect(Date.now() - startedAt).toBeLessThan(10_000);
    // Clients that hang up free their slots long before their 30 s are up.
    for (const wait of held) wait.gone.abort();
    await Promise.all(held.map((wait) => wait.reply));
    await eventually(() => expect(waitsHeld(service)).toBe(0), 15_000);
  });
});

describe('MCP batches and the per-key rate limit', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService({ env: { API_RATE_LIMIT: '200/60' } });
  });
  afterAll(() => service?.destroy());

  it('counts every message of a batch: 8,000 ask_human calls in batches of 100 create no more than the budget', async () => {
    const dev = await registerAccount(service.url);
    const statuses: number[] = [];
    let id = 0;
    for (let batch = 0; batch < 80; batch++) {
      const body = Array.from({ length: 100 }, () => ({
        jsonrpc: '2.0',
        id: ++id,
        method: 'tools/call',
        params: { name: 'ask_human', arguments: { question: `Batch ${batch}?`, wait_seconds: 0 } },
      }));
      const reply = await call(service.url, 'POST', '/mcp', { token: dev.test, body, headers: MCP_HEADERS });
      statuses.push(reply.status);
      if (reply.status === 429) {
        expect(reply.body.error.code).toBe('rate_limited');
        expect(Number(reply.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      }
    }
    const row = await service.store.db
      .selectFrom('pauses')
      .select((eb) => eb.fn.countAll<number | string>().as('count'))
      .where('developer_id', '=', dev.id)
      .executeTakeFirstOrThrow();
    const created = Number(row.count);
    // The budget is 200 messages a minute; register took none of it.
    expect(created).toBeGreaterThan(0);
    expect(created).toBeLessThanOrEqual(200);
    expect(statuses.filter((status) => status === 200).length).toBeLessThanOrEqual(2);
    expect(statuses.at(-1)).toBe(429);
  });
});

describe('many waits at once', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService({ env: { MAX_WAITS_PER_KEY: '1000' } });
  });
  afterAll(() => service?.destroy());

  it('wakes each of 500 long-polls with its own pause’s answer', async () => {
    const dev = await registerAccount(service.url);
    const pauses: Array<{ id: string; response_url: string | null }> = [];
    for (let i = 0; i < 500; i += 50) {
      pauses.push(...(await Promise.all(Array.from({ length: 50 }, () => createPause(service.url, dev.test)))));
    }
    const waits = pauses.map((pause) => longPoll(service, dev.test, pause.id, 60));
    await eventually(() => expect(waitsHeld(service)).toBe(500), 30_000);
    // Answer them with different choices, so that each wait must carry its own.
    const choices = new Map<string, string>();
    for (let i = 0; i < pauses.length; i += 50) {
      await Promise.all(
        pauses.slice(i, i + 50).map(async (pause, j) => {
          const choice = (i + j) % 2 === 0 ? 'approve' : 'reject';
          choices.set(pause.id, choice);
          const reply = await call(service.url, 'POST', `/v1/respond/${tokenOf(pause)}`, { body: { choice } });
          expect(reply.status, reply.text).toBe(200);
        }),
      );
    }
    for (const [i, outcome] of (await Promise.all(waits)).entries()) {
      const id = pauses[i]?.id ?? '';
      expect(outcome.status, id).toBe('responded');
      expect(outcome.choice, id).toBe(choices.get(id));
    }
    await eventually(() => expect(waitsHeld(service)).toBe(0), 15_000);
    expect(service.app.services.waiters.waiterCount).toBe(0);
  });
});
