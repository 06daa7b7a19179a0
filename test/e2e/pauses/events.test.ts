import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Account, call, registerAccount } from '../../helpers/http.js';
import { createPause, tokenOf } from '../../helpers/pauses.js';
import { startTestService, type TestService } from '../../helpers/service.js';

let service: TestService;
let dev: Account;
beforeAll(async () => {
  service = await startTestService();
  dev = await registerAccount(service.url);
});
afterAll(() => service.destroy());

it('lists this mode’s events oldest first, with the exact webhook payload', async () => {
  const first = await createPause(service.url, dev.test, { metadata: { n: 1 } });
  const second = await createPause(service.url, dev.test);
  const live = await createPause(service.url, dev.live);
  await call(service.url, 'DELETE', `/v1/pause/${first.id}`, { token: dev.test });
  await call(service.url, 'POST', `/v1/respond/${tokenOf(second)}`, { body: { choice: 'approve' } });
  await call(service.url, 'DELETE', `/v1/pause/${live.id}`, { token: dev.live });

  const reply = await call(service.url, 'GET', '/v1/events', { token: dev.test });
  expect(reply.status).toBe(200);
  expect(reply.body.data.map((e: { type: string }) => e.type)).toEqual(['pause.cancelled', 'pause.responded']);
  const [cancelled] = reply.body.data;
  expect(cancelled).toMatchObject({ object: 'event', pause_id: first.id });
  const stored = await service.store.db
    .selectFrom('events')
    .select('payload')
    .where('pause_id', '=', first.id)
    .executeTakeFirstOrThrow();
  expect(JSON.stringify(cancelled.payload)).toBe(stored.payload);

  const later = await call(
    service.url,
    'GET',
    `/v1/events?since=${encodeURIComponent(reply.body.data[1].created_at)}`,
    { token: dev.test },
  );
  expect(later.body.data.map((e: { pause_id: string }) => e.pause_id)).toEqual([second.id]);
  const other = await registerAccount(service.url);
  expect((await call(service.url, 'GET', '/v1/events', { token: other.test })).body.data).toEqual([]);
});

it('waits for the next event when asked to', async () => {
  const fresh = await registerAccount(service.url);
  const pause = await createPause(service.url, fresh.test);
  const started = Date.now();
  const waiting = call(service.url, 'GET', '/v1/events?wait=10', { token: fresh.test });
  await new Promise((resolve) => setTimeout(resolve, 200));
  await call(service.url, 'DELETE', `/v1/pause/${pause.id}`, { token: fresh.test });
  const reply = await waiting;
  expect(reply.body.data.map((e: { pause_id: string }) => e.pause_id)).toEqual([pause.id]);
  expect(Date.now() - started).toBeLessThan(2000);
  const empty = await call(service.url, 'GET', `/v1/events?wait=1&since=${new Date(Date.now() + 1000).toISOString()}`, {
    token: fresh.test,
  });
  expect(empty.body.data).toEqual([]);
});
