import { beforeEach, describe, expect, it } from 'vitest';
import { testEngine } from '../../helpers/database.js';
import {
  countBy,
  deliveriesOf,
  deliveryIdOf,
  errorsLogged,
  eventsOf,
  expectSigned,
  inParallel,
  payloadOf,
  processTests,
  rawStatuses,
  urlOf,
} from '../../helpers/deployment.js';
import { call, registerAccount } from '../../helpers/http.js';
import { expectQuickestWithin } from '../../helpers/latency.js';
import { createPause, eventually, sleep, tokenOf } from '../../helpers/pauses.js';
import type { ServiceProcess } from '../../helpers/process.js';

// Two pausepoint processes over one database, as behind a load balancer: they
// share long-polls, expiry and deliveries, and do nothing twice (the shared
// set-up: test/helpers/deployment.ts).

const processes = processTests();
const { deploy, addWebhook } = processes;

describe('two instances over one database', () => {
  let deployment: Awaited<ReturnType<typeof deploy>>;
  let a: ServiceProcess;
  let b: ServiceProcess;

  beforeEach(async () => {
    deployment = await deploy();
    a = await deployment.start({ name: 'A' });
    // At debug B logs each request as it arrives, so a test knows a long-poll is waiting.
    b = await deployment.start({ name: 'B', env: { LOG_LEVEL: 'debug' } });
  });

  it('share long-polls, expiry and deliveries without doing anything twice', async () => {
    const { store } = deployment;
    const account = await registerAccount(urlOf(a));

    // (a) A long-poll on B hears of an answer given on A. PostgreSQL wakes B by
    // NOTIFY; SQLite has no cross-process signal, so B's once-a-second re-check
    // finds it. The first round warms B up (its pool opens connections as the
    // wake-up also starts its worker loops) and must only beat the wait's 10 s;
    // the rounds after it are timed.
    const answeredOnAHeardOnB = async () => {
      const pause = await createPause(urlOf(a), account.test);
      const poll = call(urlOf(b), 'GET', `/v1/pause/${pause.id}?wait=10`, { token: account.test }).then((reply) => ({
        reply,
        at: Date.now(),
      }));
      await b.waitForLog((r) => r.msg === 'incoming request' && String(r.req?.url).includes(pause.id), 5000);
      await sleep(300);
      const answer = await call(urlOf(a), 'POST', `/v1/respond/${tokenOf(pause)}`, { body: { choice: 'approve' } });
      const answeredAt = Date.now();
      expect(answer.status).toBe(200);
      const { reply, at } = await poll;
      expect(reply.body).toMatchObject({ id: pause.id, status: 'responded' });
      return at - answeredAt;
    };
    expect(await answeredOnAHeardOnB(), 'warm-up wake-up on B').toBeLessThan(5000);
    // On PostgreSQL the wake-up comes by NOTIFY, well before the 1 s re-check
    // that SQLite relies on; 500 ms tells the two apart on a loaded machine too.
    await expectQuickestWithin('wake-up on B', testEngine === 'postgres' ? 500 : 1250, answeredOnAHeardOnB);

    // (b) 300 pauses made through both instances, all expiring together, each times out once.
    const expiring = await inParallel(300, 16, (i) =>
      createPause(urlOf(i % 2 ? b : a), account.test, { expires_in: 2, title: `expiring ${i}` }),
    );
    const expiringIds = expiring.map((p) => p.id as string);
    const lastExpiry = Math.max(...expiring.map((p) => Date.parse(p.expires_at)));
    await sleep(Math.max(0, lastExpiry - Date.now()));
    await eventually(
      async () => {
        const statuses = await rawStatuses(store, expiringIds);
        expect([...statuses.values()].filter((s) => s !== 'timed_out')).toEqual([]);
      },
      1500,
      50,
    );
    await sleep(600);
    const timeouts = await eventsOf(store, expiringIds);
    expect(timeouts.every((e) => e.type === 'pause.timed_out')).toBe(true);
    const perPause = countBy(timeouts.map((e) => e.pause_id));
    expect(perPause.size).toBe(300);
    expect([...perPause.entries()].filter(([, n]) => n !== 1)).toEqual([]);

    // (c) A burst of 100 cancels over both instances: each event delivered exactly once.
    const webhook = await addWebhook(a, account.test, ['pause.cancelled']);
    const toCancel = await inParallel(100, 16, (i) => createPause(urlOf(i % 2 ? a : b), account.test));
    const cancelIds = toCancel.map((p) => p.id as string);
    const cancels = await Promise.all(
      cancelIds.map((id, i) => call(urlOf(i % 2 ? b : a), 'DELETE', `/v1/pause/${id}`, { token: account.test })),
    );
    expect(cancels.map((r) => r.status)).toEqual(Array(100).fill(200));
    await processes.receiver.waitForRequests(100, 10_000);
    await eventually(async () => {
      const rows = await deliveriesOf(store, webhook.id);
      expect(rows).toHaveLength(100);
      expect(rows.filter((d) => d.status !== 'succeeded')).toEqual([]);
    });
    await sleep(1000); // time for a duplicate to show up, were there one
    const requests = processes.receiver.requests;
    for (const request of requests) expectSigned(request);
    expect(requests).toHaveLength(100);
    expect(new Set(requests.map(deliveryIdOf)).size).toBe(100);
    expect(new Set(requests.map((r) => payloadOf(r).pause_id))).toEqual(new Set(cancelIds));
    expect((await deliveriesOf(store, webhook.id)).filter((d) => Number(d.attempts) !== 1)).toEqual([]);

    expect(errorsLogged(a)).toEqual([]);
    expect(errorsLogged(b)).toEqual([]);
  }, 60_000);
});
