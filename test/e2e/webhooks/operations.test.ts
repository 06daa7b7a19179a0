import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { Clock } from '../../../src/domain/clock.js';
import { recoverDeliveries } from '../../../src/store/deliveries.js';
import { requeueFailed } from '../../../src/store/outbox.js';
import { disableWebhook } from '../../../src/store/webhooks.js';
import { type Account, call, registerAccount } from '../../helpers/http.js';
import type { ReceivedRequest } from '../../helpers/https-receiver.js';
import { createPause, eventually } from '../../helpers/pauses.js';
import { startSmtpReceiver } from '../../helpers/smtp.js';
import { webhookTests } from '../../helpers/webhook-service.js';

// Webhooks, second wave: Standard Webhooks headers (checked with the
// `standardwebhooks` package itself), secret rotation, auto-disable and
// enable, recovery, and every attempt kept. Deliveries go to a real HTTPS
// receiver; time is the service's clock, moved forward by the test.

let offsetMs = 0;
const clock: Clock = { now: () => new Date(Date.now() + offsetMs) };
const HOUR = 3_600_000;

// Base64 after whsec_, as the console makes them: the standard libraries decode it.
const WHSEC = `whsec_${Buffer.from('0123456789abcdef01234567').toString('base64')}`;
// Not whsec_: the key is the secret's UTF-8 bytes.
const PLAIN = 'a-plain-secret-of-32-characters!';

const webhooks = webhookTests({
  clock,
  env: {
    WEBHOOK_RETRY_SCHEDULE_MS: '300000,600000,900000',
    WEBHOOK_DISABLE_AFTER: '1h',
    WEBHOOK_ATTEMPT_RETENTION: '2d',
  },
});

async function addWebhook(account: Account, secret: string, path: string) {
  const reply = await call(webhooks.service.url, 'POST', '/v1/webhooks', {
    token: account.test,
    body: { url: `${webhooks.receiver.url}${path}`, events: ['pause.cancelled'], secret },
  });
  expect(reply.status, reply.text).toBe(201);
  return reply.body as { id: string; status: string; disabled_reason: string | null };
}

/** Makes a pause and cancels it: one pause.cancelled event. */
async function cancelledPause(account: Account): Promise<string> {
  const pause = await createPause(webhooks.service.url, account.test);
  const reply = await call(webhooks.service.url, 'DELETE', `/v1/pause/${pause.id}`, { token: account.test });
  expect(reply.status, reply.text).toBe(200);
  return pause.id;
}

const requestsTo = (path: string) => webhooks.receiver.requests.filter((request) => request.path === path);

/** The `nth` request to `path` carrying the pause's event, once the worker has sent it. */
async function requestFor(path: string, pauseId: string, nth = 1): Promise<ReceivedRequest> {
  const of = () => requestsTo(path).filter((request) => request.body.toString('utf8').includes(pauseId));
  await eventually(async () => {
    await webhooks.service.worker!.runOnce();
    expect(of().length).toBeGreaterThanOrEqual(nth);
  });
  return of()[nth - 1]!;
}

const standardHeaders = (request: ReceivedRequest) => ({
  'webhook-id': String(request.headers['webhook-id']),
  'webhook-timestamp': String(request.headers['webhook-timestamp']),
  'webhook-signature': String(request.headers['webhook-signature']),
});

const webhookOf = async (account: Account, id: string) =>
  (
    (await call(webhooks.service.url, 'GET', '/v1/webhooks', { token: account.test })).body.data as Array<
      Record<string, any>
    >
  ).find((webhook) => webhook.id === id)!;

async function deliveriesOf(account: Account, webhookId: string) {
  const reply = await call(webhooks.service.url, 'GET', `/v1/webhooks/${webhookId}/deliveries`, {
    token: account.test,
  });
  expect(reply.status).toBe(200);
  return reply.body.data as Array<Record<string, any>>;
}

describe('Standard Webhooks headers', () => {
  it('signs every delivery so that the standardwebhooks package verifies it, beside the SPEC headers', async () => {
    offsetMs = 0;
    const account = await registerAccount(webhooks.service.url);
    const whsec = await addWebhook(account, WHSEC, '/std-whsec');
    const plain = await addWebhook(account, PLAIN, '/std-plain');
    expect(whsec).toMatchObject({ status: 'active', disabled_reason: null });
    const pauseId = await cancelledPause(account);
    const [a, b] = [await requestFor('/std-whsec', pauseId), await requestFor('/std-plain', pauseId)];

    for (const [request, secret, verifier] of [
      [a, WHSEC, new Webhook(WHSEC)],
      [b, PLAIN, new Webhook(Buffer.from(PLAIN, 'utf8'), { format: 'raw' })],
    ] as const) {
      const headers = standardHeaders(request);
      expect(verifier.verify(request.body.toString('utf8'), headers)).toMatchObject({ event: 'pause.cancelled' });
      // The delivery id, as in X-Service-Delivery; the attempt's time in Unix seconds.
      expect(headers['webhook-id']).toBe(request.headers['x-service-delivery']);
      expect(headers['webhook-id']).toMatch(/^dlv_/);
      expect(Math.abs(Number(headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(30);
      expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
      // SPEC's header is unchanged.
      expect(request.headers['x-service-signature']).toBe(
        `sha256=${createHmac('sha256', secret).update(request.body).digest('hex')}`,
      );
      // A changed body or another secret does not verify.
      expect(() => verifier.verify(`${request.body.toString('utf8')} `, headers)).toThrow();
      expect(() =>
        new Webhook(`whsec_${Buffer.from('another key').toString('base64')}`).verify(request.body.toString(), headers),
      ).toThrow();
    }
    expect(plain.id).not.toBe(whsec.id);
  });

  it('keeps webhook-id across a retry and signs each attempt at its own time', async () => {
    offsetMs = 0;
    const account = await registerAccount(webhooks.service.url);
    await addWebhook(account, WHSEC, '/std-retry');
    webhooks.receiver.respondWith({ status: 500 });
    const pauseId = await cancelledPause(account);
    const first = await requestFor('/std-retry', pauseId);
    offsetMs = 6 * 60_000; // past the first retry gap (5 min)
    const second = await requestFor('/std-retry', pauseId, 2);
    expect(second.headers['webhook-id']).toBe(first.headers['webhook-id']);
    expect(
      Number(second.headers['webhook-timestamp']) - Number(first.headers['webhook-timestamp']),
    ).toBeGreaterThanOrEqual(6 * 60 - 1);
    // Signed for its own timestamp (the library's tolerance is real time, so compare with its signer).
    const signer = new Webhook(WHSEC);
    const timestamp = new Date(Number(second.headers['webhook-timestamp']) * 1000);
    expect(second.headers['webhook-signature']).toBe(
      signer.sign(String(second.headers['webhook-id']), timestamp, second.body.toString('utf8')),
    );
    offsetMs = 0;
  });
});

describe('secret rotation', () => {
  it('answers the new secret once, signs with both for 24 hours, and keeps at most two valid', async () => {
    offsetMs = 0;
    const account = await registerAccount(webhooks.service.url);
    const webhook = await addWebhook(account, WHSEC, '/rotate');
    const rotated = await call(webhooks.service.url, 'POST', `/v1/webhooks/${webhook.id}/rotate-secret`, {
      token: account.test,
    });
    expect(rotated.status, rotated.text).toBe(200);
    const second: string = rotated.body.secret;
    expect(second).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(Date.parse(rotated.body.previous_secret_expires_at) - Date.now()).toBeGreaterThan(24 * HOUR - 60_000);
    expect(rotated.body).toMatchObject({ id: webhook.id, object: 'webhook', status: 'active' });
    // Never again: not in the list.
    const list = await call(webhooks.service.url, 'GET', '/v1/webhooks', { token: account.test });
    expect(list.text).not.toContain(second);
    expect(webhooks.service.logs.join('\n')).not.toContain(second);
    const stored = await webhooks.service.store.db
      .selectFrom('webhooks')
      .selectAll()
      .where('id', '=', webhook.id)
      .executeTakeFirstOrThrow();
    expect(JSON.stringify(stored)).not.toContain(second.slice('whsec_'.length));
    expect(JSON.stringify(stored)).not.toContain(WHSEC.slice('whsec_'.length));

    const duringPause = await cancelledPause(account);
    const during = await requestFor('/rotate', duringPause);
    const body = during.body.toString('utf8');
    expect(String(during.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(new Webhook(WHSEC).verify(body, standardHeaders(during))).toBeTruthy();
    expect(new Webhook(second).verify(body, standardHeaders(during))).toBeTruthy();
    // SPEC's header: the new secret's.
    expect(during.headers['x-service-signature']).toBe(
      `sha256=${createHmac('sha256', second).update(during.body).digest('hex')}`,
    );

    // Rotating again within the 24 hours drops the first secret.
    const third: string = (
      await call(webhooks.service.url, 'POST', `/v1/webhooks/${webhook.id}/rotate-secret`, { token: account.test })
    ).body.secret;
    const againPause = await cancelledPause(account);
    const again = await requestFor('/rotate', againPause);
    const againBody = again.body.toString('utf8');
    expect(String(again.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(new Webhook(third).verify(againBody, standardHeaders(again))).toBeTruthy();
    expect(new Webhook(second).verify(againBody, standardHeaders(again))).toBeTruthy();
    expect(() => new Webhook(WHSEC).verify(againBody, standardHeaders(again))).toThrow();

    // After 24 hours only the newest signs.
    offsetMs = 24 * HOUR + 60_000;
    const afterPause = await cancelledPause(account);
    const after = await requestFor('/rotate', afterPause);
    const timestamp = new Date(Number(after.headers['webhook-timestamp']) * 1000);
    expect(after.headers['webhook-signature']).toBe(
      new Webhook(third).sign(String(after.headers['webhook-id']), timestamp, after.body.toString('utf8')),
    );
    offsetMs = 0;
  });

  it("refuses another account's or the other mode's webhook with 404", async () => {
    const account = await registerAccount(webhooks.service.url);
    const webhook = await addWebhook(account, WHSEC, '/rotate-404');
    const other = await registerAccount(webhooks.service.url);
    for (const token of [other.test, account.live]) {
      for (const action of ['rotate-secret', 'enable']) {
        const reply = await call(webhooks.service.url, 'POST', `/v1/webhooks/${webhook.id}/${action}`, { token });
        expect(reply.status).toBe(404);
        expect(reply.text).not.toContain('whsec_');
      }
    }
    expect((await call(webhooks.service.url, 'POST', `/v1/webhooks/${webhook.id}/rotate-secret`)).status).toBe(401);
  });
});

describe('auto-disable, enable and recover', () => {
  it('disables at once on 410 Gone: no more deliveries, events still recorded; enable and recover deliver what it missed once', async () => {
    offsetMs = 0;
    const account = await registerAccount(webhooks.service.url);
    const webhook = await addWebhook(account, WHSEC, '/gone');
    webhooks.receiver.respondWith({ status: 410 });
    const start = new Date(Date.now() - 1000).toISOString();
    await requestFor('/gone', await cancelledPause(account));
    await eventually(async () => expect((await webhookOf(account, webhook.id)).status).toBe('disabled'));
    const disabled = await webhookOf(account, webhook.id);
    expect(disabled.disabled_reason).toContain('410');

    // While disabled: the event is recorded, no delivery is made or sent.
    const missed = await cancelledPause(account);
    await webhooks.service.worker!.runOnce();
    const events = await call(webhooks.service.url, 'GET', `/v1/pause/${missed}`, { token: account.test });
    expect(events.status).toBe(200);
    const recorded = await webhooks.service.store.db
      .selectFrom('events')
      .select('id')
      .where('pause_id', '=', missed)
      .execute();
    expect(recorded).toHaveLength(1);
    expect(await deliveriesOf(account, webhook.id)).toHaveLength(1);
    expect(requestsTo('/gone')).toHaveLength(1);

    // Recover refuses while disabled; retry too.
    const refused = await call(webhooks.service.url, 'POST', `/v1/webhooks/${webhook.id}/recover`, {
      token: account.test,
      body: { since: start },
    });
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('webhook_disabled');
    const [gone] = await deliveriesOf(account, webhook.id);
    expect(gone).toMatchObject({ status: 'failed' });
    const retry = await call(webhooks.service.url, 'POST', `/v1/webhooks/${webhook.id}/deliveries/${gone!.id}/retry`, {
      token: account.test,
    });
    expect(retry.status).toBe(409);
    expect(retry.body.error.code).toBe('webhook_disabled');

    const enabled = await call(webhooks.service.url, 'POST', `/v1/webhooks/${webhook.id}/enable`, {
      token: account.test,
    });
    expect(enabled.status).toBe(200);
    expect(enabled.body).toMatchObject({ status: 'active', disabled_reason: null });

    // The 410'd delivery is re-queued and the missed event delivered, once each.
    const recovered = await call(webhooks.service.url, 'POST', `/v1/webhooks/${webhook.id}/recover`, {
      token: account.test,
      body: { since: start },
    });
    expect(recovered.status, recovered.text).toBe(200);
    expect(recovered.body).toEqual({ object: 'recovery', webhook_id: webhook.id, requeued: 1, added: 1 });
    await eventually(async () => {
      await webhooks.service.worker!.runOnce();
      expect(requestsTo('/gone')).toHaveLength(3);
    });
    const repeat = await call(webhooks.service.url, 'POST', `/v1/webhooks/${webhook.id}/recover`, {
      token: account.test,
      body: { since: start },
    });
    expect(repeat.body).toMatchObject({ requeued: 0, added: 0 });
    const deliveries = await deliveriesOf(account, webhook.id);
    expect(deliveries).toHaveLength(2);
    expect(deliveries.map((delivery) => delivery.status)).toEqual(['succeeded', 'succeeded']);
    await webhooks.service.worker!.runOnce();
    expect(requestsTo('/gone')).toHaveLength(3);
    // The pause's deliveries are those two events', one each.
    const pauseIds = new Set(deliveries.map((delivery) => delivery.pause_id));
    expect(pauseIds.size).toBe(2);
  });

  it('recovers each missed event once in total when two recoveries run at once', async () => {
    offsetMs = 0;
    const account = await registerAccount(webhooks.service.url);
    const webhook = await addWebhook(account, WHSEC, '/twice');
    const start = new Date(Date.now() - 1000).toISOString();
    webhooks.receiver.respondWith({ status: 410 });
    await requestFor('/twice', await cancelledPause(account));
    await eventually(async () => expect((await webhookOf(account, webhook.id)).status).toBe('disabled'));
    for (let i = 0; i < 3; i++) await cancelledPause(account);
    await call(webhooks.service.url, 'POST', `/v1/webhooks/${webhook.id}/enable`, { token: account.test });
    const recover = () =>
      call(webhooks.service.url, 'POST', `/v1/webhooks/${webhook.id}/recover`, {
        token: account.test,
        body: { since: start },
      });
    const replies = await Promise.all([recover(), recover()]);
    for (const reply of replies) expect(reply.status, reply.text).toBe(200);
    const total = (key: 'added' | 'requeued') => replies.reduce((sum, reply) => sum + (reply.body[key] as number), 0);
    expect({ added: total('added'), requeued: total('requeued') }).toEqual({ added: 3, requeued: 1 });
    const deliveries = await deliveriesOf(account, webhook.id);
    expect(deliveries).toHaveLength(4);
    expect(new Set(deliveries.map((delivery) => delivery.pause_id)).size).toBe(4);

    // In batches smaller than the window (its deliveries gone): every event once, over three batches.
    await webhooks.service.store.db.deleteFrom('deliveries').where('webhook_id', '=', webhook.id).execute();
    const batched = await recoverDeliveries(webhooks.service.store, {
      webhookId: webhook.id,
      since: start,
      until: new Date(Date.now() + 1000).toISOString(),
      now: new Date().toISOString(),
      batchSize: 2,
    });
    expect(batched).toEqual({ requeued: 0, added: 4 });
    const again = await deliveriesOf(account, webhook.id);
    expect(new Set(again.map((delivery) => delivery.pause_id))).toEqual(
      new Set(deliveries.map((delivery) => delivery.pause_id)),
    );
    expect(again).toHaveLength(4);
  });

  it("emails a live webhook's owner through the notifications queue when it is disabled, not a test one's", async () => {
    const smtp = await startSmtpReceiver();
    // After the test, once the service started below is destroyed.
    onTestFinished(() => smtp.close());
    const mailing = await webhooks.startAnother({
      SMTP_URL: smtp.url,
      EMAIL_FROM: 'pausepoint <ops@example.com>',
      PUBLIC_BASE_URL: 'https://pausepoint.example.com',
    });
    const account = await registerAccount(mailing.url);
    const add = async (token: string, path: string) =>
      (
        await call(mailing.url, 'POST', '/v1/webhooks', {
          token,
          body: { url: `${webhooks.receiver.url}${path}`, events: ['pause.cancelled'], secret: WHSEC },
        })
      ).body.id as string;
    const live = await add(account.live, '/gone-live');
    const test = await add(account.test, '/gone-test');
    webhooks.receiver.setDefault({ status: 410 });
    for (const token of [account.live, account.test]) {
      const pause = await createPause(mailing.url, token);
      await call(mailing.url, 'DELETE', `/v1/pause/${pause.id}`, { token });
    }
    const [mail] = await smtp.waitForMails(1, 10_000);
    expect(mail!.to).toEqual([account.email]);
    expect(mail!.parsed.subject).toBe('Your pausepoint webhook was disabled');
    expect(mail!.parsed.text).toContain(`${webhooks.receiver.url}/gone-live`);
    expect(mail!.parsed.text).toContain('410 Gone');
    expect(mail!.parsed.text).toContain(`https://pausepoint.example.com/console/webhooks/${live}`);
    const statusOf = async (token: string, id: string) =>
      ((await call(mailing.url, 'GET', '/v1/webhooks', { token })).body.data as Array<Record<string, any>>).find(
        (webhook) => webhook.id === id,
      )?.status;
    await eventually(async () => expect(await statusOf(account.test, test)).toBe('disabled'));
    expect(await statusOf(account.live, live)).toBe('disabled');
    await mailing.worker!.runOnce();
    expect(smtp.mails).toHaveLength(1);
  });

  it('disables a webhook whose every attempt has failed for WEBHOOK_DISABLE_AFTER, and not one with a success since', async () => {
    offsetMs = 0;
    const account = await registerAccount(webhooks.service.url);
    const webhook = await addWebhook(account, WHSEC, '/failing');
    webhooks.receiver.setDefault({ status: 500 });
    await requestFor('/failing', await cancelledPause(account));
    // Within the hour: still active.
    offsetMs = 30 * 60_000;
    await requestFor('/failing', await cancelledPause(account));
    expect((await webhookOf(account, webhook.id)).status).toBe('active');
    // A success resets the streak.
    webhooks.receiver.respondWith({ status: 200 });
    await requestFor('/failing', await cancelledPause(account));
    offsetMs = 50 * 60_000;
    await requestFor('/failing', await cancelledPause(account));
    offsetMs = 80 * 60_000; // 80 min after the first failure, 50 after the success
    await requestFor('/failing', await cancelledPause(account));
    expect((await webhookOf(account, webhook.id)).status).toBe('active');
    // Past an hour of failures since the success: disabled; pending retries fail, unsent, as they fall due.
    offsetMs = 115 * 60_000;
    await requestFor('/failing', await cancelledPause(account));
    await eventually(async () => expect((await webhookOf(account, webhook.id)).status).toBe('disabled'));
    expect((await webhookOf(account, webhook.id)).disabled_reason).toMatch(/failed since/);
    const sent = requestsTo('/failing').length;
    offsetMs = 200 * 60_000;
    await webhooks.service.worker!.runOnce();
    const statuses = (await deliveriesOf(account, webhook.id)).map((delivery) => delivery.status);
    expect(statuses).not.toContain('pending');
    expect(requestsTo('/failing')).toHaveLength(sent);
    offsetMs = 0;
  });

  it('keeps the failing streak on the webhook: begun by a failure, ended by a success, whatever attempts are pruned', async () => {
    offsetMs = 0;
    const account = await registerAccount(webhooks.service.url);
    const webhook = await addWebhook(account, WHSEC, '/streak');
    const failingSince = async () =>
      (
        await webhooks.service.store.db
          .selectFrom('webhooks')
          .select('failing_since')
          .where('id', '=', webhook.id)
          .executeTakeFirstOrThrow()
      ).failing_since;
    webhooks.receiver.setDefault({ status: 500 });
    await requestFor('/streak', await cancelledPause(account));
    const began = await failingSince();
    expect(began).not.toBeNull();
    // A later failure leaves it be; a success ends it.
    offsetMs = 10 * 60_000;
    await requestFor('/streak', await cancelledPause(account));
    expect(await failingSince()).toBe(began);
    webhooks.receiver.respondWith({ status: 200 });
    await requestFor('/streak', await cancelledPause(account));
    await eventually(async () => expect(await failingSince()).toBeNull());
    // Failing again, then its attempts gone (as WEBHOOK_ATTEMPT_RETENTION would):
    // the streak still counts from its first failure and disables it past the hour.
    offsetMs = 20 * 60_000;
    await requestFor('/streak', await cancelledPause(account));
    const again = await failingSince();
    expect(Date.parse(again!)).toBeGreaterThanOrEqual(Date.now() + 19 * 60_000);
    await webhooks.service.store.db.deleteFrom('delivery_attempts').where('webhook_id', '=', webhook.id).execute();
    offsetMs = 85 * 60_000;
    await requestFor('/streak', await cancelledPause(account));
    await eventually(async () => expect((await webhookOf(account, webhook.id)).status).toBe('disabled'));
    expect((await webhookOf(account, webhook.id)).disabled_reason).toBe(`Every delivery has failed since ${again}.`);
    // Enabling resets it.
    await call(webhooks.service.url, 'POST', `/v1/webhooks/${webhook.id}/enable`, { token: account.test });
    expect(await failingSince()).toBeNull();
    offsetMs = 0;
  });

  it('keeps the attempts in flight when their webhook is disabled, with their real answers, and sends nothing more', async () => {
    offsetMs = 0;
    const account = await registerAccount(webhooks.service.url);
    const webhook = await addWebhook(account, WHSEC, '/in-flight');
    // A slow receiver: both attempts are out when the webhook is disabled. The first one to arrive succeeds.
    let answered = 0;
    webhooks.receiver.setDefault(() =>
      answered++ === 0
        ? { status: 200, body: 'took it', delayMs: 1000 }
        : { status: 500, body: 'broken', delayMs: 1000 },
    );
    const pauses = [await cancelledPause(account), await cancelledPause(account)];
    await eventually(async () => {
      await webhooks.service.worker!.runOnce();
      expect(requestsTo('/in-flight')).toHaveLength(2);
    });
    const disabled = await disableWebhook(webhooks.service.store, {
      webhookId: webhook.id,
      reason: 'by hand',
      now: new Date().toISOString(),
    });
    expect(disabled).toBeDefined();
    const ok = pauses.find((pauseId) => requestsTo('/in-flight')[0]!.body.toString('utf8').includes(pauseId))!;
    const failing = pauses.find((pauseId) => pauseId !== ok)!;
    const attemptsOf = async (pauseId: string) => {
      const delivery = (await deliveriesOf(account, webhook.id)).find((row) => row.pause_id === pauseId)!;
      const reply = await call(webhooks.service.url, 'GET', `/v1/webhooks/${webhook.id}/deliveries/${delivery.id}`, {
        token: account.test,
      });
      return reply.body as { status: string; attempts: Array<Record<string, unknown>> };
    };
    await eventually(async () => {
      await webhooks.service.worker!.runOnce();
      expect((await attemptsOf(failing)).attempts).toHaveLength(1);
    });
    expect(await attemptsOf(ok)).toMatchObject({
      status: 'succeeded',
      attempts: [{ status_code: 200, response_body: 'took it', error: null }],
    });
    expect(await attemptsOf(failing)).toMatchObject({
      status: 'pending',
      attempts: [{ status_code: 500, response_body: 'broken', error: 'HTTP 500' }],
    });
    // Its retry falls due: failed for good, unsent, and no attempt made up.
    offsetMs = 10 * 60_000;
    await webhooks.service.worker!.runOnce();
    expect(await attemptsOf(failing)).toMatchObject({ status: 'failed', attempts: [{ status_code: 500 }] });
    expect((await attemptsOf(failing)).attempts).toHaveLength(1);
    expect(requestsTo('/in-flight')).toHaveLength(2);
    // Past the actions' checks (a race with the disabling): the store re-queues nothing for a disabled webhook.
    const failed = (await deliveriesOf(account, webhook.id)).find((row) => row.pause_id === failing)!;
    const now = new Date(Date.now() + offsetMs).toISOString();
    expect(await requeueFailed(webhooks.service.store, 'deliveries', failed.id, now)).toBe(false);
    const window = { since: new Date(0).toISOString(), until: now, now };
    expect(await recoverDeliveries(webhooks.service.store, { webhookId: webhook.id, ...window })).toEqual({
      requeued: 0,
      added: 0,
    });
    expect((await attemptsOf(failing)).status).toBe('failed');
    offsetMs = 0;
  });

  it('refuses a bad window naming the field, and another account or mode with 404', async () => {
    const account = await registerAccount(webhooks.service.url);
    const webhook = await addWebhook(account, WHSEC, '/window');
    const recover = (body: unknown, token = account.test) =>
      call(webhooks.service.url, 'POST', `/v1/webhooks/${webhook.id}/recover`, { token, body });
    for (const [body, field] of [
      [{}, 'since'],
      [{ since: 'yesterday' }, 'since'],
      [{ since: '2026-11-20T00:00:00Z', until: 'soon' }, 'until'],
      [{ since: '2026-11-20T00:00:00Z', until: '2026-11-19T00:00:00Z' }, 'until'],
      [{ since: new Date(Date.now() + HOUR).toISOString() }, 'since'],
    ] as const) {
      const reply = await recover(body);
      expect(reply.status, JSON.stringify(body)).toBe(400);
      expect(reply.body.error.code).toBe('invalid_request');
      expect(reply.body.error.message).toContain(field);
      expect(reply.body.error.details.fields.map((problem: { field: string }) => problem.field)).toEqual([field]);
    }
    const other = await registerAccount(webhooks.service.url);
    expect((await recover({ since: '2026-11-20T00:00:00Z' }, other.test)).status).toBe(404);
    expect((await recover({ since: '2026-11-20T00:00:00Z' }, account.live)).status).toBe(404);
    expect((await recover({ since: '2026-11-20T00:00:00Z' })).body).toMatchObject({ requeued: 0, added: 0 });
  });
});

describe('attempts', () => {
  it('keeps every attempt with its time, duration, status, the first 1,024 bytes of the answer and the error', async () => {
    offsetMs = 0;
    const account = await registerAccount(webhooks.service.url);
    const webhook = await addWebhook(account, WHSEC, '/attempts');
    // One byte first: the cut at 1,024 bytes falls inside a two-byte é, which is left out whole.
    const long = `x${'é'.repeat(1000)}`;
    webhooks.receiver.respondWith({ status: 503, body: long });
    const pauseId = await cancelledPause(account);
    await requestFor('/attempts', pauseId);
    offsetMs = 6 * 60_000;
    await requestFor('/attempts', pauseId, 2);
    const [delivery] = await deliveriesOf(account, webhook.id);
    const reply = await call(webhooks.service.url, 'GET', `/v1/webhooks/${webhook.id}/deliveries/${delivery!.id}`, {
      token: account.test,
    });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body).toMatchObject({ id: delivery!.id, object: 'delivery', status: 'succeeded', attempt_count: 2 });
    const [failed, succeeded] = reply.body.attempts;
    expect(reply.body.attempts).toHaveLength(2);
    expect(failed).toEqual({
      at: expect.any(String),
      duration_ms: expect.any(Number),
      status_code: 503,
      response_body: `x${'é'.repeat(511)}`,
      error: 'HTTP 503',
    });
    expect(Buffer.byteLength(failed.response_body)).toBe(1023);
    expect(succeeded).toMatchObject({ status_code: 200, response_body: 'ok', error: null });
    expect(Date.parse(succeeded.at) - Date.parse(failed.at)).toBeGreaterThanOrEqual(5 * 60_000);

    const other = await registerAccount(webhooks.service.url);
    for (const token of [other.test, account.live]) {
      const refused = await call(webhooks.service.url, 'GET', `/v1/webhooks/${webhook.id}/deliveries/${delivery!.id}`, {
        token,
      });
      expect(refused.status).toBe(404);
    }
    const unknown = await call(webhooks.service.url, 'GET', `/v1/webhooks/${webhook.id}/deliveries/dlv_unknown`, {
      token: account.test,
    });
    expect(unknown.status).toBe(404);
    offsetMs = 0;
  });

  it('keeps an answer carrying U+0000 (which PostgreSQL refuses in text) with U+FFFD in its place, and settles it', async () => {
    offsetMs = 0;
    const account = await registerAccount(webhooks.service.url);
    const webhook = await addWebhook(account, WHSEC, '/nul');
    webhooks.receiver.respondWith({ status: 200, body: 'a\0b' });
    await requestFor('/nul', await cancelledPause(account));
    await eventually(async () => {
      await webhooks.service.worker!.runOnce();
      expect((await deliveriesOf(account, webhook.id))[0]).toMatchObject({ status: 'succeeded' });
    });
    const [delivery] = await deliveriesOf(account, webhook.id);
    const reply = await call(webhooks.service.url, 'GET', `/v1/webhooks/${webhook.id}/deliveries/${delivery!.id}`, {
      token: account.test,
    });
    expect(reply.body.attempts).toEqual([expect.objectContaining({ status_code: 200, response_body: 'a\uFFFDb' })]);
    // Sent once: the settle did not fail and leave it to be sent again.
    expect(requestsTo('/nul')).toHaveLength(1);
  });

  it('prunes attempts older than WEBHOOK_ATTEMPT_RETENTION, keeping the delivery and newer attempts', async () => {
    offsetMs = 0;
    const account = await registerAccount(webhooks.service.url);
    const webhook = await addWebhook(account, WHSEC, '/prune');
    await requestFor('/prune', await cancelledPause(account));
    offsetMs = 36 * HOUR;
    await requestFor('/prune', await cancelledPause(account));
    const attemptsOf = async () => {
      const deliveries = await deliveriesOf(account, webhook.id);
      const read = await Promise.all(
        deliveries.map((delivery) =>
          call(webhooks.service.url, 'GET', `/v1/webhooks/${webhook.id}/deliveries/${delivery.id}`, {
            token: account.test,
          }),
        ),
      );
      return read.map((reply) => reply.body.attempts.length as number);
    };
    await webhooks.service.worker!.runOnce();
    expect(await attemptsOf()).toEqual([1, 1]);
    // Two days after the first attempt, not yet after the second.
    offsetMs = 49 * HOUR;
    await webhooks.service.worker!.runOnce();
    expect(await attemptsOf()).toEqual([1, 0]);
    offsetMs = 0;
  });
});
