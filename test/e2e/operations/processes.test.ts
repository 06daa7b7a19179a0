import { describe, expect, it } from 'vitest';
import {
  errorsLogged,
  eventsOf,
  expectSigned,
  payloadOf,
  processTests,
  rawStatuses,
  urlOf,
} from '../../helpers/deployment.js';
import { call, registerAccount } from '../../helpers/http.js';
import { createPause, eventually, sleep } from '../../helpers/pauses.js';

// pausepoint as a real process over a real database: graceful shutdown, a
// restart, and the ROLE=api / ROLE=worker split (ARCHITECTURE.md, How it
// works): expiry survives restarts, and each role does only its own work.
// A kill -9 in the middle of work: kill-9.test.ts; several instances sharing
// one database: two-instances.test.ts (the shared set-up: test/helpers/deployment.ts).

const processes = processTests();
const { deploy, addWebhook } = processes;

describe('one process', () => {
  it('SIGTERM answers an in-flight long-poll with the pause as it stands and exits 0', async () => {
    const deployment = await deploy();
    // At debug the service logs each request as it arrives, not only when it is answered.
    const service = await deployment.start({ env: { LOG_LEVEL: 'debug' } });
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
    expect(processes.receiver.requests).toHaveLength(0);

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
    const [request] = await processes.receiver.waitForRequests(1, 3000);
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
