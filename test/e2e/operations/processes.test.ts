import { createHmac } from 'node:crypto';
import { type AddressInfo, createServer } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '../../../src/store/store.js';
import { freshDatabase, type TestDatabase, testEngine } from '../../helpers/database.js';
import { call, registerAccount } from '../../helpers/http.js';
import { type HttpsReceiver, type ReceivedRequest, startHttpsReceiver } from '../../helpers/https-receiver.js';
import { createPause, eventually, sleep, tokenOf } from '../../helpers/pauses.js';
import {
  killAllServices,
  newSecretKey,
  openTestStore,
  type ServiceProcess,
  type SpawnOptions,
  spawnService,
} from '../../helpers/process.js';
import { startSmtpReceiver } from '../../helpers/smtp.js';

// pausepoint as real processes over a real database: graceful shutdown,
// restarts, kill -9 in the middle of work, several instances sharing one
// database, and the ROLE=api / ROLE=worker split (ARCHITECTURE.md, How it works):
// a crash loses nothing (work is at-least-once), a transition happens exactly
// once, expiry survives restarts, instances share the work.

const SECRET = 'whsec_processes_0123456789';

let receiver: HttpsReceiver;
beforeAll(async () => {
  receiver = await startHttpsReceiver();
});
afterAll(async () => {
  await killAllServices();
  await receiver?.close();
});
beforeEach(() => {
  receiver.reset();
  receiver.setDefault({});
});

/** One database and master secret that service processes (and restarts) share. */
interface Deployment {
  databaseUrl: string;
  secretKey: string;
  /** The test's own connection, for the raw rows (opened with the first process). */
  readonly store: Store;
  start(options?: Partial<SpawnOptions>): Promise<ServiceProcess>;
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  // Processes first (they hold the database), then connections, then the database.
  await killAllServices();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function deploy(): Promise<Deployment> {
  const database: TestDatabase = await freshDatabase();
  cleanups.push(() => database.drop());
  const secretKey = newSecretKey();
  let store: Store | undefined;
  return {
    databaseUrl: database.url,
    secretKey,
    get store() {
      if (!store) throw new Error('start a service first');
      return store;
    },
    async start(options = {}) {
      const service = await spawnService({
        databaseUrl: database.url,
        secretKey,
        caFile: receiver.caFile,
        ...options,
      });
      if (!store) {
        const opened = openTestStore(database.url, secretKey);
        store = opened;
        cleanups.push(() => opened.close());
      }
      return service;
    },
  };
}

const urlOf = (service: ServiceProcess): string => {
  if (!service.url) throw new Error(`${service.name} does not listen`);
  return service.url;
};

async function addWebhook(service: ServiceProcess, key: string, events: string[]) {
  const reply = await call(urlOf(service), 'POST', '/v1/webhooks', {
    token: key,
    body: { url: `${receiver.url}/hook`, events, secret: SECRET },
  });
  expect(reply.status, reply.text).toBe(201);
  return reply.body as { id: string };
}

const rawStatuses = async (store: Store, ids: string[]) =>
  new Map(
    (await store.db.selectFrom('pauses').select(['id', 'status']).where('id', 'in', ids).execute()).map((row) => [
      row.id,
      row.status,
    ]),
  );

const eventsOf = (store: Store, ids: string[]) =>
  store.db.selectFrom('events').select(['id', 'pause_id', 'type']).where('pause_id', 'in', ids).execute();

const deliveriesOf = (store: Store, webhookId: string) =>
  store.db.selectFrom('deliveries').selectAll().where('webhook_id', '=', webhookId).execute();

/** How many times each pause id occurs. */
const countBy = (ids: string[]) => {
  const counts = new Map<string, number>();
  for (const id of ids) counts.set(id, (counts.get(id) ?? 0) + 1);
  return counts;
};

const payloadOf = (request: ReceivedRequest) =>
  JSON.parse(request.body.toString()) as { event: string; pause_id: string; data: Record<string, unknown> };
const deliveryIdOf = (request: ReceivedRequest) => String(request.headers['x-service-delivery']);

/** The signature a receiver computes itself: HMAC-SHA256 of the raw bytes with the shared secret. */
function expectSigned(request: ReceivedRequest): void {
  const expected = `sha256=${createHmac('sha256', SECRET).update(request.body).digest('hex')}`;
  expect(request.headers['x-service-signature']).toBe(expected);
}

/** Runs `work` for 0…count-1 with at most `parallel` at a time; results in order. */
async function inParallel<T>(count: number, parallel: number, work: (index: number) => Promise<T>): Promise<T[]> {
  const results: T[] = new Array(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(parallel, count) }, async () => {
      while (next < count) {
        const index = next++;
        results[index] = await work(index);
      }
    }),
  );
  return results;
}

const errorsLogged = (service: ServiceProcess) => service.logs().filter((record) => Number(record.level) >= 50);

describe('one process', () => {
  it('SIGTERM answers an in-flight long-poll with the pause as it stands and exits 0', async () => {
    const deployment = await deploy();
    const service = await deployment.start();
    const url = urlOf(service);
    const account = await registerAccount(url);
    const pause = await createPause(url, account.test);

    // A keep-alive connection (the client's default): the answer sent during
    // shutdown must close it, or close() would wait on the idle socket.
    const poll = call(url, 'GET', `/v1/pause/${pause.id}?wait=30`, { token: account.test }).then((reply) => ({
      reply,
      at: Date.now(),
    }));
    // The poll has reached the service and is waiting.
    await service.waitForLog((r) => r.msg === 'incoming request' && String(r.req?.url).includes('wait=30'), 5000);
    await sleep(300);

    const signalledAt = Date.now();
    const exiting = service.kill('SIGTERM', 5000);
    const { reply, at } = await poll;
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body).toMatchObject({ id: pause.id, status: 'pending', response: null });
    expect(at - signalledAt).toBeLessThan(1000);

    expect(await exiting).toEqual({ code: 0, signal: null });
    expect(Date.now() - signalledAt).toBeLessThan(3000);
    expect(service.logs().map((r) => r.msg)).toEqual(
      expect.arrayContaining(['shutting down: finishing in-flight requests', 'stopped']),
    );
    const after = await fetch(`${url}/health`).then(
      () => 'answered',
      (error: Error & { cause?: { code?: string } }) => error.cause?.code ?? error.message,
    );
    expect(after).toBe('ECONNREFUSED');
  });

  it('times out after a restart a pause that expired while the service was stopped', async () => {
    const deployment = await deploy();
    let service = await deployment.start();
    const account = await registerAccount(urlOf(service));
    const pause = await createPause(urlOf(service), account.test, { expires_in: 2, timeout_default: 'reject' });
    expect(await service.kill('SIGTERM')).toEqual({ code: 0, signal: null });

    // Past expires_at with nothing running: nobody has timed it out.
    await sleep(Math.max(0, Date.parse(pause.expires_at) + 500 - Date.now()));
    const { store } = deployment;
    expect((await rawStatuses(store, [pause.id])).get(pause.id)).toBe('pending');
    expect(await eventsOf(store, [pause.id])).toEqual([]);

    service = await deployment.start();
    const readyAt = Date.now();
    await eventually(
      async () => expect((await rawStatuses(store, [pause.id])).get(pause.id)).toBe('timed_out'),
      1500,
      25,
    );
    expect(Date.now() - readyAt).toBeLessThan(1500);

    const reply = await call(urlOf(service), 'GET', `/v1/pause/${pause.id}`, { token: account.test });
    expect(reply.body).toMatchObject({
      status: 'timed_out',
      response: { choice: 'reject', text: null, response_at: pause.expires_at },
    });
    await sleep(600); // a further expiry tick or two
    const events = await eventsOf(store, [pause.id]);
    expect(events.map((e) => e.type)).toEqual(['pause.timed_out']);
  });
});

describe('kill -9', () => {
  it('loses no webhook when killed in the middle of a burst of deliveries', async () => {
    const deployment = await deploy();
    let service = await deployment.start();
    const account = await registerAccount(urlOf(service));
    const webhook = await addWebhook(service, account.test, ['pause.cancelled']);
    const pauses = await inParallel(40, 10, () => createPause(urlOf(service), account.test));
    const ids = pauses.map((p) => p.id as string);

    // A slow receiver keeps deliveries in flight.
    receiver.setDefault({ delayMs: 500 });
    const cancels = await Promise.all(
      ids.map((id) => call(urlOf(service), 'DELETE', `/v1/pause/${id}`, { token: account.test })),
    );
    expect(cancels.map((r) => r.status)).toEqual(Array(40).fill(200));
    await receiver.waitForRequests(1, 5000);
    expect(await service.kill('SIGKILL')).toEqual({ code: null, signal: 'SIGKILL' });

    // The kill did land mid-work: some deliveries claimed and unsettled, none lost.
    const { store } = deployment;
    const atKill = await deliveriesOf(store, webhook.id);
    expect(atKill).toHaveLength(40);
    const inFlight = atKill.filter((d) => d.status === 'pending' && Number(d.attempts) > 0);
    expect(inFlight.length).toBeGreaterThan(0);

    receiver.setDefault({});
    service = await deployment.start();
    await eventually(
      async () => {
        expect(new Set(receiver.requests.map((r) => payloadOf(r).pause_id))).toEqual(new Set(ids));
        const rows = await deliveriesOf(store, webhook.id);
        expect(rows.filter((d) => d.status !== 'succeeded')).toEqual([]);
      },
      20_000,
      100,
    );

    // At least once, with stable delivery ids: each pause has one delivery id and vice versa.
    const byDelivery = new Map<string, Set<string>>();
    const byPause = new Map<string, Set<string>>();
    for (const request of receiver.requests) {
      expectSigned(request);
      const payload = payloadOf(request);
      expect(payload.event).toBe('pause.cancelled');
      expect(request.headers['x-service-event']).toBe('pause.cancelled');
      const deliveryId = deliveryIdOf(request);
      byDelivery.set(deliveryId, (byDelivery.get(deliveryId) ?? new Set()).add(payload.pause_id));
      byPause.set(payload.pause_id, (byPause.get(payload.pause_id) ?? new Set()).add(deliveryId));
    }
    expect(byDelivery.size).toBe(40);
    expect([...byDelivery.values()].every((p) => p.size === 1)).toBe(true);
    expect([...byPause.values()].every((d) => d.size === 1)).toBe(true);
    // Exactly one event per pause, all still cancelled.
    const events = await eventsOf(store, ids);
    expect(events).toHaveLength(40);
    expect([...countBy(events.map((e) => e.pause_id)).values()].every((n) => n === 1)).toBe(true);
    expect([...(await rawStatuses(store, ids)).values()]).toEqual(Array(40).fill('cancelled'));
    expect(errorsLogged(service)).toEqual([]);
  }, 45_000);

  it('keeps an answer that was acknowledged just before a kill -9, with one event, and delivers it', async () => {
    const deployment = await deploy();
    let service = await deployment.start();
    const account = await registerAccount(urlOf(service));
    const webhook = await addWebhook(service, account.test, ['pause.responded']);
    const pause = await createPause(urlOf(service), account.test, { metadata: { order: 7 } });
    const answer = await call(urlOf(service), 'POST', `/v1/respond/${tokenOf(pause)}`, { body: { choice: 'approve' } });
    expect(answer.status, answer.text).toBe(200);
    expect(await service.kill('SIGKILL')).toEqual({ code: null, signal: 'SIGKILL' });

    const { store } = deployment;
    expect((await rawStatuses(store, [pause.id])).get(pause.id)).toBe('responded');

    service = await deployment.start();
    const [request] = await receiver.waitForRequests(1, 15_000);
    expectSigned(request!);
    expect(payloadOf(request!)).toMatchObject({
      event: 'pause.responded',
      pause_id: pause.id,
      data: { choice: 'approve', text: null, response_at: answer.body.response_at, metadata: { order: 7 } },
    });
    await eventually(async () => {
      const rows = await deliveriesOf(store, webhook.id);
      expect(rows.map((d) => d.status)).toEqual(['succeeded']);
    });

    const reply = await call(urlOf(service), 'GET', `/v1/pause/${pause.id}`, { token: account.test });
    expect(reply.body).toMatchObject({
      status: 'responded',
      response: { choice: 'approve', response_at: answer.body.response_at },
    });
    // The answer stands: a second one loses with a clear 409 and no event.
    const again = await call(urlOf(service), 'POST', `/v1/respond/${tokenOf(pause)}`, { body: { choice: 'reject' } });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('already_responded');
    expect((await eventsOf(store, [pause.id])).map((e) => e.type)).toEqual(['pause.responded']);
    expect(new Set(receiver.requests.map(deliveryIdOf)).size).toBe(1);
  }, 40_000);
  it('still sends an email whose sending was cut short by a kill -9', async () => {
    // An SMTP server that accepts the connection and never greets: the attempt
    // is under way (claimed, not settled) when the process is killed.
    const silent = createServer(() => {});
    await new Promise<void>((done) => silent.listen(0, '127.0.0.1', done));
    cleanups.push(() => new Promise<void>((done) => silent.close(() => done())));
    const smtp = await startSmtpReceiver();
    cleanups.push(() => smtp.close());
    const silentUrl = `smtp://127.0.0.1:${(silent.address() as AddressInfo).port}`;

    const deployment = await deploy();
    const mailEnv = { SMTP_URL: silentUrl, EMAIL_FROM: 'approvals@example.com' };
    const first = await deployment.start({ env: mailEnv });
    const account = await registerAccount(urlOf(first));
    const pause = await createPause(urlOf(first), account.live, { notify: { email: ['ops@example.com'] } });
    await eventually(async () => {
      const [row] = await deployment.store.db
        .selectFrom('notifications')
        .selectAll()
        .where('pause_id', '=', pause.id)
        .execute();
      expect(row).toMatchObject({ status: 'pending', attempts: 1 });
    }, 5000);
    expect(await first.kill('SIGKILL')).toEqual({ code: null, signal: 'SIGKILL' });

    // The restarted service reaches a working SMTP server; the claim's lease runs out and the mail goes.
    const second = await deployment.start({ env: { ...mailEnv, SMTP_URL: smtp.url } });
    const [mail] = await smtp.waitForMails(1, 20_000);
    expect(mail!.to).toEqual(['ops@example.com']);
    expect(mail!.parsed.text).toContain(pause.response_url);
    await eventually(async () => {
      const read = await call(urlOf(second), 'GET', `/v1/pause/${pause.id}`, { token: account.live });
      expect(read.body.notifications[0]).toMatchObject({ status: 'sent', attempts: 2 });
    }, 5000);
    expect(smtp.mails).toHaveLength(1);
  }, 60_000);
});

describe('two instances over one database', () => {
  let deployment: Deployment;
  let a: ServiceProcess;
  let b: ServiceProcess;

  beforeEach(async () => {
    deployment = await deploy();
    a = await deployment.start({ name: 'A' });
    b = await deployment.start({ name: 'B' });
  });

  it('share long-polls, expiry and deliveries without doing anything twice', async () => {
    const { store } = deployment;
    const account = await registerAccount(urlOf(a));

    // (a) A long-poll on B hears of an answer given on A. PostgreSQL wakes B by
    // NOTIFY; SQLite has no cross-process signal, so B's once-a-second re-check
    // finds it. The first round warms B up (its pool opens connections as the
    // wake-up also starts its worker loops); the second is timed.
    for (const round of ['warm-up', 'timed']) {
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
      // On PostgreSQL the wake-up comes by NOTIFY, well before the 1 s re-check
      // that SQLite relies on; 500 ms tells the two apart on a loaded machine too.
      const bound = round === 'timed' && testEngine === 'postgres' ? 500 : 1250;
      expect(at - answeredAt, `${round} wake-up on B`).toBeLessThan(bound);
    }

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
    await receiver.waitForRequests(100, 10_000);
    await eventually(async () => {
      const rows = await deliveriesOf(store, webhook.id);
      expect(rows).toHaveLength(100);
      expect(rows.filter((d) => d.status !== 'succeeded')).toEqual([]);
    });
    await sleep(1000); // time for a duplicate to show up, were there one
    const requests = receiver.requests;
    for (const request of requests) expectSigned(request);
    expect(requests).toHaveLength(100);
    expect(new Set(requests.map(deliveryIdOf)).size).toBe(100);
    expect(new Set(requests.map((r) => payloadOf(r).pause_id))).toEqual(new Set(cancelIds));
    expect((await deliveriesOf(store, webhook.id)).filter((d) => Number(d.attempts) !== 1)).toEqual([]);

    expect(errorsLogged(a)).toEqual([]);
    expect(errorsLogged(b)).toEqual([]);
  }, 60_000);
});

describe('ROLE=api and ROLE=worker', () => {
  it('leaves expiry and delivery to the worker process', async () => {
    const deployment = await deploy();
    const api = await deployment.start({ role: 'api', name: 'api' });
    expect((await api.waitForLog((r) => r.msg === 'pausepoint started')).role).toBe('api');
    const account = await registerAccount(urlOf(api));
    await addWebhook(api, account.test, ['pause.timed_out']);
    const pause = await createPause(urlOf(api), account.test, { expires_in: 1 });

    // The API process alone never times a pause out: the row stays pending past its expiry.
    const { store } = deployment;
    const watchUntil = Date.parse(pause.expires_at) + 1500;
    while (Date.now() < watchUntil) {
      expect((await rawStatuses(store, [pause.id])).get(pause.id)).toBe('pending');
      await sleep(100);
    }
    expect(await eventsOf(store, [pause.id])).toEqual([]);
    expect(receiver.requests).toHaveLength(0);

    const worker = await deployment.start({ role: 'worker', name: 'worker' });
    expect(worker.url).toBeUndefined();
    expect((await worker.waitForLog((r) => r.msg === 'pausepoint started')).role).toBe('worker');
    const workerReadyAt = Date.now();
    await eventually(
      async () => expect((await rawStatuses(store, [pause.id])).get(pause.id)).toBe('timed_out'),
      1500,
      25,
    );
    expect(Date.now() - workerReadyAt).toBeLessThan(1500);
    const [request] = await receiver.waitForRequests(1, 3000);
    expectSigned(request!);
    expect(payloadOf(request!)).toMatchObject({
      event: 'pause.timed_out',
      pause_id: pause.id,
      data: { choice: null, response_at: pause.expires_at },
    });
    expect((await eventsOf(store, [pause.id])).map((e) => e.type)).toEqual(['pause.timed_out']);
    const reply = await call(urlOf(api), 'GET', `/v1/pause/${pause.id}`, { token: account.test });
    expect(reply.body.status).toBe('timed_out');
    expect(errorsLogged(api)).toEqual([]);
    expect(errorsLogged(worker)).toEqual([]);
  }, 40_000);
});
