import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Account, call, registerAccount } from '../../helpers/http.js';
import { startTestService, type TestService } from '../../helpers/service.js';

// Caps on what an account may hold hold under concurrency, on both engines:
// a burst of requests must not slip past a count each of them read before
// the others wrote. (The live-pause quota has its own concurrency test in
// test/e2e/accounts/billing.test.ts.)

const CAP = 20;
const CAP_MESSAGE = /at most 20 webhooks/;

let service: TestService;

beforeAll(async () => {
  service = await startTestService({ env: { WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8' } });
});
afterAll(() => service?.destroy());

const register = (key: string, n: number) =>
  call(service.url, 'POST', '/v1/webhooks', {
    token: key,
    body: { url: `https://127.0.0.1:9/hook/${n}`, events: ['pause.responded'], secret: 'caps-test-secret-0123456789' },
  });

const countOf = async (key: string) =>
  (await call(service.url, 'GET', '/v1/webhooks', { token: key })).body.data.length as number;

describe('20 webhooks per mode', () => {
  it('refuses the 21st, per mode, and makes room again when one is deleted', async () => {
    const dev = await registerAccount(service.url);
    const created: string[] = [];
    for (let n = 0; n < CAP; n += 1) {
      const reply = await register(dev.test, n);
      expect(reply.status, reply.text).toBe(201);
      created.push(reply.body.id);
    }
    const over = await register(dev.test, CAP);
    expect(over.status).toBe(400);
    expect(over.body.error).toMatchObject({ code: 'invalid_request', message: expect.stringMatching(CAP_MESSAGE) });
    // The other mode counts apart.
    expect((await register(dev.live, 0)).status).toBe(201);

    const removed = await call(service.url, 'DELETE', `/v1/webhooks/${created[0]}`, { token: dev.test });
    expect(removed.status).toBe(200);
    expect((await register(dev.test, CAP + 1)).status).toBe(201);
    expect(await countOf(dev.test)).toBe(CAP);
  });

  it('creates exactly 20 of 60 concurrent registrations; the rest answer 400 with the cap', async () => {
    const dev = await registerAccount(service.url);
    const replies = await Promise.all(Array.from({ length: 60 }, (_, n) => register(dev.test, n)));
    const statuses = replies.map((reply) => reply.status);
    expect(statuses.filter((status) => status === 201).length).toBe(CAP);
    expect(statuses.filter((status) => status === 400).length).toBe(60 - CAP);
    for (const reply of replies.filter((r) => r.status === 400)) {
      expect(reply.body.error.message).toMatch(CAP_MESSAGE);
    }
    expect(await countOf(dev.test)).toBe(CAP);
    const stored = await service.store.db
      .selectFrom('webhooks')
      .select((eb) => eb.fn.countAll().as('count'))
      .where('developer_id', '=', dev.id)
      .executeTakeFirstOrThrow();
    expect(Number(stored.count)).toBe(CAP);
  });

  it('holds for two accounts registering at once, each up to its own cap', async () => {
    const [alice, bob] = [await registerAccount(service.url), await registerAccount(service.url)];
    const burst = (dev: Account) => Array.from({ length: 30 }, (_, n) => register(dev.test, n));
    const replies = await Promise.all([...burst(alice), ...burst(bob)]);
    expect(replies.filter((reply) => reply.status === 201).length).toBe(2 * CAP);
    expect(await countOf(alice.test)).toBe(CAP);
    expect(await countOf(bob.test)).toBe(CAP);
  });
});
