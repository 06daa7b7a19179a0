import { type AddressInfo, createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
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
import { createPause, eventually, tokenOf } from '../../helpers/pauses.js';
import { SHORT_LEASE } from '../../helpers/process.js';
import { startSmtpReceiver } from '../../helpers/smtp.js';

// pausepoint killed with SIGKILL in the middle of work, then started again on
// the same database: a crash loses nothing (work is at-least-once), and a
// transition happens exactly once (the shared set-up: test/helpers/deployment.ts).

const processes = processTests();
const { deploy, addWebhook } = processes;

describe('kill -9', () => {
  it('loses no webhook when killed in the middle of a burst of deliveries', async () => {
    const deployment = await deploy(SHORT_LEASE);
    let service = await deployment.start();
    const account = await registerAccount(urlOf(service));
    const webhook = await addWebhook(service, account.test, ['pause.cancelled']);
    const pauses = await inParallel(40, 10, () => createPause(urlOf(service), account.test));
    const ids = pauses.map((p) => p.id as string);

    // A slow receiver keeps deliveries in flight.
    processes.receiver.setDefault({ delayMs: 500 });
    const cancels = await Promise.all(
      ids.map((id) => call(urlOf(service), 'DELETE', `/v1/pause/${id}`, { token: account.test })),
    );
    expect(cancels.map((r) => r.status)).toEqual(Array(40).fill(200));
    await processes.receiver.waitForRequests(1, 5000);
    expect(await service.kill('SIGKILL')).toEqual({ code: null, signal: 'SIGKILL' });

    // The kill did land mid-work: some deliveries claimed and unsettled, none lost.
    const { store } = deployment;
    const atKill = await deliveriesOf(store, webhook.id);
    expect(atKill).toHaveLength(40);
    const inFlight = atKill.filter((d) => d.status === 'pending' && Number(d.attempts) > 0);
    expect(inFlight.length).toBeGreaterThan(0);

    processes.receiver.setDefault({});
    service = await deployment.start();
    await eventually(
      async () => {
        expect(new Set(processes.receiver.requests.map((r) => payloadOf(r).pause_id))).toEqual(new Set(ids));
        const rows = await deliveriesOf(store, webhook.id);
        expect(rows.filter((d) => d.status !== 'succeeded')).toEqual([]);
      },
      20_000,
      100,
    );

    // At least once, with stable delivery ids: each pause has one delivery id and vice versa.
    const byDelivery = new Map<string, Set<string>>();
    const byPause = new Map<string, Set<string>>();
    for (const request of processes.receiver.requests) {
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
    const deployment = await deploy(SHORT_LEASE);
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
    const [request] = await processes.receiver.waitForRequests(1, 15_000);
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
    expect(new Set(processes.receiver.requests.map(deliveryIdOf)).size).toBe(1);
  }, 40_000);
  it('still sends an email whose sending was cut short by a kill -9', async () => {
    // An SMTP server that accepts the connection and never greets: the attempt
    // is under way (claimed, not settled) when the process is killed.
    const silent = createServer(() => {});
    await new Promise<void>((done) => silent.listen(0, '127.0.0.1', done));
    processes.cleanup(() => new Promise<void>((done) => silent.close(() => done())));
    const smtp = await startSmtpReceiver();
    processes.cleanup(() => smtp.close());
    const silentUrl = `smtp://127.0.0.1:${(silent.address() as AddressInfo).port}`;

    const deployment = await deploy(SHORT_LEASE);
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
