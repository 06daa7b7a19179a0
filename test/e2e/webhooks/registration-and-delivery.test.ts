import { createHmac } from 'node:crypto';
import { verify as octokitVerify } from '@octokit/webhooks-methods';
import { beforeAll, describe, expect, it } from 'vitest';
import { type Account, call, registerAccount } from '../../helpers/http.js';
import { createPause, eventually, sleep, tokenOf } from '../../helpers/pauses.js';
import { webhookTests } from '../../helpers/webhook-service.js';

// Real deliveries: the service POSTs over TLS to a real HTTPS receiver whose
// certificate comes from a throw-away CA. Retries run on a short schedule.
const SCHEDULE = [300, 600, 900];
const SECRET = 'whsec_0123456789abcdef';

const webhooks = webhookTests({ env: { WEBHOOK_RETRY_SCHEDULE_MS: SCHEDULE.join(',') } });
let account: Account;

beforeAll(async () => {
  account = await registerAccount(webhooks.service.url);
});

async function addWebhook(key: string, events: string[], url = `${webhooks.receiver.url}/hook`) {
  const reply = await call(webhooks.service.url, 'POST', '/v1/webhooks', {
    token: key,
    body: { url, events, secret: SECRET },
  });
  expect(reply.status, reply.text).toBe(201);
  return reply.body;
}

const sign = (body: Buffer | string, secret = SECRET) =>
  `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

async function deliveriesOf(webhookId: string, key = account.test) {
  const reply = await call(webhooks.service.url, 'GET', `/v1/webhooks/${webhookId}/deliveries`, { token: key });
  expect(reply.status).toBe(200);
  return reply.body.data as Array<Record<string, any>>;
}

describe('registration', () => {
  it('registers, lists and deletes a webhook without ever returning the secret', async () => {
    const dev = await registerAccount(webhooks.service.url);
    const webhook = await addWebhook(dev.test, ['pause.responded', 'pause.cancelled']);
    expect(webhook).toEqual({
      id: expect.stringMatching(/^wh_[0-9a-z]{26}$/),
      object: 'webhook',
      mode: 'test',
      url: `${webhooks.receiver.url}/hook`,
      events: ['pause.responded', 'pause.cancelled'],
      created_at: expect.any(String),
      status: 'active',
      disabled_reason: null,
    });
    const list = await call(webhooks.service.url, 'GET', '/v1/webhooks', { token: dev.test });
    expect(list.body).toEqual({ object: 'list', data: [webhook], has_more: false });
    expect(list.text).not.toContain(SECRET);
    expect((await call(webhooks.service.url, 'GET', '/v1/webhooks', { token: dev.live })).body.data).toEqual([]);
    // Stored sealed, not in plaintext.
    const row = await webhooks.service.store.db
      .selectFrom('webhooks')
      .selectAll()
      .where('id', '=', webhook.id)
      .executeTakeFirst();
    expect(JSON.stringify(row)).not.toContain(SECRET);

    expect((await call(webhooks.service.url, 'DELETE', `/v1/webhooks/${webhook.id}`, { token: dev.live })).status).toBe(
      404,
    );
    const other = await registerAccount(webhooks.service.url);
    expect(
      (await call(webhooks.service.url, 'DELETE', `/v1/webhooks/${webhook.id}`, { token: other.test })).status,
    ).toBe(404);
    const deleted = await call(webhooks.service.url, 'DELETE', `/v1/webhooks/${webhook.id}`, { token: dev.test });
    expect(deleted.body).toEqual({ id: webhook.id, object: 'webhook', deleted: true });
    expect((await call(webhooks.service.url, 'GET', '/v1/webhooks', { token: dev.test })).body.data).toEqual([]);
    expect((await call(webhooks.service.url, 'DELETE', `/v1/webhooks/${webhook.id}`, { token: dev.test })).status).toBe(
      404,
    );
  });

  it('admits localhost when WEBHOOK_ALLOWED_NETWORKS admits 127.0.0.1, and says how to test locally otherwise', async () => {
    const body = {
      url: `https://localhost:${webhooks.receiver.port}/hook`,
      events: ['pause.responded'],
      secret: SECRET,
    };
    const admitted = await call(webhooks.service.url, 'POST', '/v1/webhooks', { token: account.test, body });
    expect(admitted.status).toBe(201);
    const refused = await call(webhooks.service.url, 'POST', '/v1/webhooks', {
      token: account.test,
      body: { ...body, url: `https://[::1]:${webhooks.receiver.port}/hook` },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe('invalid_webhook_url');
    expect(refused.body.error.message).toContain('pausepoint listen');
    expect(refused.body.error.message).toContain('WEBHOOK_ALLOWED_NETWORKS');
    await call(webhooks.service.url, 'DELETE', `/v1/webhooks/${admitted.body.id}`, { token: account.test });
  });

  it.each([
    ['invalid_webhook_url', { url: 'http://127.0.0.1/hook' }],
    ['invalid_webhook_url', { url: 'https://10.0.0.1/hook' }],
    ['invalid_webhook_url', { url: 'https://169.254.169.254/latest' }],
    ['invalid_webhook_url', { url: 'not a url' }],
    ['invalid_events', { events: [] }],
    ['invalid_events', { events: ['pause.responded', 'pause.responded'] }],
    ['invalid_events', { events: ['pause.created'] }],
    ['invalid_secret', { secret: 'short-secret-15' }],
    ['invalid_request', { extra: true }],
    ['invalid_request', { events: 'pause.responded' }],
  ])('refuses with %s: %j', async (code, change) => {
    const body = { url: `${webhooks.receiver.url}/hook`, events: ['pause.responded'], secret: SECRET, ...change };
    const reply = await call(webhooks.service.url, 'POST', '/v1/webhooks', { token: account.test, body });
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe(code);
    expect(reply.text).not.toContain(SECRET);
  });
});

describe('delivery', () => {
  it('delivers each event type with the exact envelope, headers and signature', async () => {
    const dev = await registerAccount(webhooks.service.url);
    const webhook = await addWebhook(dev.test, ['pause.responded', 'pause.timed_out', 'pause.cancelled']);
    const answered = await createPause(webhooks.service.url, dev.test, { allow_text: true, metadata: { run: 1 } });
    const cancelled = await createPause(webhooks.service.url, dev.test, { metadata: { run: 2 } });
    const expired = await createPause(webhooks.service.url, dev.test, {
      expires_in: 1,
      timeout_default: 'reject',
      metadata: { run: 3 },
    });
    const answer = await call(webhooks.service.url, 'POST', `/v1/respond/${tokenOf(answered)}`, {
      body: { choice: 'approve', text: 'ok' },
    });
    await call(webhooks.service.url, 'DELETE', `/v1/pause/${cancelled.id}`, { token: dev.test });
    const requests = await webhooks.receiver.waitForRequests(3, 5000);

    const byEvent = new Map(requests.map((r) => [JSON.parse(r.body.toString()).event, r]));
    for (const request of requests) {
      expect(request.method).toBe('POST');
      expect(request.path).toBe('/hook');
      expect(request.headers['content-type']).toBe('application/json');
      expect(request.headers['user-agent']).toMatch(/^pausepoint-webhooks\//);
      expect(request.headers['x-service-delivery']).toMatch(/^dlv_[0-9a-z]{26}$/);
      const payload = JSON.parse(request.body.toString());
      expect(Object.keys(payload)).toEqual(['event', 'pause_id', 'developer_id', 'timestamp', 'data']);
      expect(payload.developer_id).toBe(dev.id);
      expect(request.headers['x-service-event']).toBe(payload.event);
      // Our own HMAC over the raw bytes, and an independent verifier of the same scheme.
      expect(request.headers['x-service-signature']).toBe(sign(request.body));
      expect(await octokitVerify(SECRET, request.body.toString(), String(request.headers['x-service-signature']))).toBe(
        true,
      );
      expect(
        await octokitVerify(
          'another-secret-xx',
          request.body.toString(),
          String(request.headers['x-service-signature']),
        ),
      ).toBe(false);
    }
    expect(JSON.parse(byEvent.get('pause.responded')!.body.toString())).toMatchObject({
      pause_id: answered.id,
      data: { choice: 'approve', text: 'ok', response_at: answer.body.response_at, metadata: { run: 1 } },
    });
    expect(JSON.parse(byEvent.get('pause.cancelled')!.body.toString())).toMatchObject({
      pause_id: cancelled.id,
      data: { metadata: { run: 2 } },
    });
    const timedOut = JSON.parse(byEvent.get('pause.timed_out')!.body.toString());
    expect(timedOut).toMatchObject({ pause_id: expired.id });
    expect(timedOut.data).toEqual({ choice: 'reject', response_at: expired.expires_at, metadata: { run: 3 } });

    await eventually(async () => {
      const log = await deliveriesOf(webhook.id, dev.test);
      expect(log.map((d) => d.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
      expect(log.every((d) => d.attempts === 1 && d.last_status_code === 200 && d.completed_at)).toBe(true);
    });
  });

  it('starts a delivery promptly after its event', async () => {
    // Woken by the transition, not by the idle worker's look at its queue: this
    // service looks only once a minute (QUEUE_POLL_MS), so five deliveries each
    // within seconds can only be the wake-up. (A bound in milliseconds against the
    // 1 s default poll failed on loaded machines, on the base as well.)
    const wokenWithinMs = 5000;
    const idle = await webhooks.startAnother({ QUEUE_POLL_MS: '60000' });
    const dev = await registerAccount(idle.url);
    const added = await call(idle.url, 'POST', '/v1/webhooks', {
      token: dev.test,
      body: { url: `${webhooks.receiver.url}/hook`, events: ['pause.cancelled'], secret: SECRET },
    });
    expect(added.status, added.text).toBe(201);
    for (let round = 1; round <= 5; round++) {
      const pause = await createPause(idle.url, dev.test);
      const cancelledAt = Date.now();
      await call(idle.url, 'DELETE', `/v1/pause/${pause.id}`, { token: dev.test });
      const requests = await webhooks.receiver.waitForRequests(round, wokenWithinMs);
      expect(requests[round - 1]!.receivedAt - cancelledAt).toBeLessThan(wokenWithinMs);
    }
  }, 60_000);

  it('sends only to webhooks of the same mode and event type', async () => {
    const dev = await registerAccount(webhooks.service.url);
    const liveHook = await addWebhook(dev.live, ['pause.cancelled']);
    const testHook = await addWebhook(dev.test, ['pause.responded']);
    const testCancelHook = await addWebhook(dev.test, ['pause.cancelled'], `${webhooks.receiver.url}/test-cancel`);
    const pause = await createPause(webhooks.service.url, dev.test);
    await call(webhooks.service.url, 'DELETE', `/v1/pause/${pause.id}`, { token: dev.test });
    const [request] = await webhooks.receiver.waitForRequests(1, 3000);
    expect(request!.path).toBe('/test-cancel');
    await sleep(300);
    expect(webhooks.receiver.requests).toHaveLength(1);
    expect(await deliveriesOf(liveHook.id, dev.live)).toEqual([]);
    expect(await deliveriesOf(testHook.id, dev.test)).toEqual([]);
    expect(await deliveriesOf(testCancelHook.id, dev.test)).toHaveLength(1);
  });

  it('sends pause.voted, signed like every event, only to webhooks that subscribe to it', async () => {
    const dev = await registerAccount(webhooks.service.url);
    await addWebhook(dev.test, ['pause.voted'], `${webhooks.receiver.url}/votes`);
    await addWebhook(dev.test, ['pause.responded'], `${webhooks.receiver.url}/outcomes`);
    const pause = await createPause(webhooks.service.url, dev.test, {
      reviewers: [{ email: 'ann@example.com', name: 'Ann' }, { email: 'bob@example.com' }],
      quorum: 2,
      metadata: { ticket: 9 },
    });
    const [ann, bob] = pause.reviewers;
    await call(webhooks.service.url, 'POST', `/v1/respond/${tokenOf(ann)}`, { body: { choice: 'approve' } });
    const [first] = await webhooks.receiver.waitForRequests(1, 3000);
    expect(first!.path).toBe('/votes');
    expect(first!.headers['x-service-event']).toBe('pause.voted');
    expect(first!.headers['x-service-signature']).toBe(sign(first!.body));
    const voted = JSON.parse(first!.body.toString());
    expect(Object.keys(voted).sort()).toEqual(['data', 'developer_id', 'event', 'pause_id', 'timestamp']);
    expect(voted).toMatchObject({ event: 'pause.voted', pause_id: pause.id, developer_id: dev.id });
    expect(voted.data).toEqual({
      reviewer: { id: ann.id, email: 'ann@example.com', name: 'Ann' },
      choice: 'approve',
      text: null,
      values: null,
      voted_at: expect.any(String),
      votes_so_far: 1,
      metadata: { ticket: 9 },
    });
    await call(webhooks.service.url, 'POST', `/v1/respond/${tokenOf(bob)}`, { body: { choice: 'approve' } });
    const requests = await webhooks.receiver.waitForRequests(3, 3000);
    expect(requests.map((r) => r.path).sort()).toEqual(['/outcomes', '/votes', '/votes']);
    const outcome = JSON.parse(requests.find((r) => r.path === '/outcomes')!.body.toString());
    expect(outcome.data).toMatchObject({
      choice: 'approve',
      responded_by: { id: bob.id, email: 'bob@example.com', name: null },
      votes: [
        { reviewer_id: ann.id, choice: 'approve' },
        { reviewer_id: bob.id, choice: 'approve' },
      ],
    });
    await sleep(300);
    expect(webhooks.receiver.requests).toHaveLength(3);
  });

  it('retries a failing endpoint at the scheduled gaps with the same bytes, then succeeds', async () => {
    const dev = await registerAccount(webhooks.service.url);
    const webhook = await addWebhook(dev.test, ['pause.cancelled']);
    webhooks.receiver.respondWith({ status: 500 }, { status: 404 }, { status: 200 });
    const pause = await createPause(webhooks.service.url, dev.test);
    await call(webhooks.service.url, 'DELETE', `/v1/pause/${pause.id}`, { token: dev.test });
    const requests = await webhooks.receiver.waitForRequests(3, 5000);
    const gaps = [requests[1]!.receivedAt - requests[0]!.receivedAt, requests[2]!.receivedAt - requests[1]!.receivedAt];
    expect(gaps[0]).toBeGreaterThanOrEqual(SCHEDULE[0]! - 20);
    expect(gaps[1]).toBeGreaterThanOrEqual(SCHEDULE[1]! - 20);
    expect(gaps[0]).toBeLessThan(SCHEDULE[0]! + 1000);
    expect(gaps[1]).toBeLessThan(SCHEDULE[1]! + 1000);
    for (const request of requests.slice(1)) {
      expect(request.body.equals(requests[0]!.body)).toBe(true);
      expect(request.headers['x-service-signature']).toBe(requests[0]!.headers['x-service-signature']);
      expect(request.headers['x-service-delivery']).toBe(requests[0]!.headers['x-service-delivery']);
    }
    await eventually(async () => {
      const [delivery] = await deliveriesOf(webhook.id, dev.test);
      expect(delivery).toMatchObject({ status: 'succeeded', attempts: 3, last_status_code: 200, last_error: null });
    });
  });

  it('makes exactly 1 + 3 attempts to a dead endpoint, marks it failed and logs it; retry re-queues it', async () => {
    const dev = await registerAccount(webhooks.service.url);
    const webhook = await addWebhook(dev.test, ['pause.cancelled']);
    webhooks.receiver.setDefault({ status: 503 });
    const pause = await createPause(webhooks.service.url, dev.test);
    await call(webhooks.service.url, 'DELETE', `/v1/pause/${pause.id}`, { token: dev.test });
    await eventually(async () => {
      const [delivery] = await deliveriesOf(webhook.id, dev.test);
      expect(delivery).toMatchObject({ status: 'failed', attempts: 4, last_status_code: 503, last_error: 'HTTP 503' });
      expect(delivery?.next_attempt_at).toBeNull();
    }, 6000);
    await sleep(SCHEDULE[2]! + 300);
    expect(webhooks.receiver.requests).toHaveLength(4);
    const [delivery] = await deliveriesOf(webhook.id, dev.test);
    const logged = webhooks.service.logs.map((line) => JSON.parse(line)).find((e) => e.delivery_id === delivery!.id);
    expect(logged).toMatchObject({ level: 50, webhook_id: webhook.id, error: 'HTTP 503' });

    // Replay by hand: same body, same signature.
    webhooks.receiver.setDefault({ status: 200 });
    const notFailed = await call(webhooks.service.url, 'POST', `/v1/webhooks/${webhook.id}/deliveries/dlv_nope/retry`, {
      token: dev.test,
    });
    expect(notFailed.status).toBe(404);
    const retried = await call(
      webhooks.service.url,
      'POST',
      `/v1/webhooks/${webhook.id}/deliveries/${delivery!.id}/retry`,
      {
        token: dev.test,
      },
    );
    expect(retried.status).toBe(200);
    expect(retried.body.status).toBe('pending');
    const requests = await webhooks.receiver.waitForRequests(5, 3000);
    expect(requests[4]!.body.equals(requests[0]!.body)).toBe(true);
    expect(requests[4]!.headers['x-service-signature']).toBe(requests[0]!.headers['x-service-signature']);
    await eventually(async () => expect((await deliveriesOf(webhook.id, dev.test))[0]?.status).toBe('succeeded'));
    const again = await call(
      webhooks.service.url,
      'POST',
      `/v1/webhooks/${webhook.id}/deliveries/${delivery!.id}/retry`,
      {
        token: dev.test,
      },
    );
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('delivery_not_failed');
  });

  it('does not follow a redirect: a 3xx is a failed attempt', async () => {
    const dev = await registerAccount(webhooks.service.url);
    const webhook = await addWebhook(dev.test, ['pause.cancelled']);
    webhooks.receiver.respondWith({ redirectTo: `${webhooks.receiver.url}/elsewhere` }, { status: 200 });
    const pause = await createPause(webhooks.service.url, dev.test);
    await call(webhooks.service.url, 'DELETE', `/v1/pause/${pause.id}`, { token: dev.test });
    const requests = await webhooks.receiver.waitForRequests(2, 4000);
    expect(requests.map((r) => r.path)).toEqual(['/hook', '/hook']);
    await eventually(async () => {
      const [delivery] = await deliveriesOf(webhook.id, dev.test);
      expect(delivery).toMatchObject({ status: 'succeeded', attempts: 2 });
    });
  });

  it('cuts a receiver that never answers at the outbound deadline and retries', async () => {
    // Its own service with a 1 s deadline (OUTBOUND_TIMEOUT_MS; 5 s by default, test/unit/config.test.ts),
    // so the test waits two seconds for two timeouts, not ten.
    const timeoutMs = 1000;
    const strict = await webhooks.startAnother({
      WEBHOOK_RETRY_SCHEDULE_MS: SCHEDULE.join(','),
      OUTBOUND_TIMEOUT_MS: String(timeoutMs),
    });
    const dev = await registerAccount(strict.url);
    const added = await call(strict.url, 'POST', '/v1/webhooks', {
      token: dev.test,
      body: { url: `${webhooks.receiver.url}/hook`, events: ['pause.cancelled'], secret: SECRET },
    });
    expect(added.status, added.text).toBe(201);
    const deliveries = async () =>
      (await call(strict.url, 'GET', `/v1/webhooks/${added.body.id}/deliveries`, { token: dev.test })).body
        .data as Array<Record<string, any>>;
    // Two hangs, so the timeout's error stays readable for the whole second attempt (a success
    // clears it; with one hang it showed only for the 300 ms before the retry, which a slow poll missed).
    webhooks.receiver.respondWith({ hang: true }, { hang: true }, { status: 204 });
    const pause = await createPause(strict.url, dev.test);
    const started = Date.now();
    await call(strict.url, 'DELETE', `/v1/pause/${pause.id}`, { token: dev.test });
    await eventually(
      async () => expect((await deliveries())[0]?.last_error).toMatch(/timed out after 1000 ms/),
      timeoutMs + 3000,
      100,
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(timeoutMs - 100);
    await eventually(async () => expect((await deliveries())[0]?.status).toBe('succeeded'), timeoutMs * 2 + 4000);
    // This pause's event only: the receiver is shared, and an earlier test's retry can still arrive.
    expect(webhooks.receiver.requests.filter((request) => request.body.includes(pause.id))).toHaveLength(3);
  });

  it('drops pending deliveries of a deleted webhook', async () => {
    const dev = await registerAccount(webhooks.service.url);
    const webhook = await addWebhook(dev.test, ['pause.cancelled']);
    webhooks.receiver.setDefault({ status: 500 });
    const pause = await createPause(webhooks.service.url, dev.test);
    await call(webhooks.service.url, 'DELETE', `/v1/pause/${pause.id}`, { token: dev.test });
    await webhooks.receiver.waitForRequests(1, 3000);
    const deleted = await call(webhooks.service.url, 'DELETE', `/v1/webhooks/${webhook.id}`, { token: dev.test });
    expect(deleted.status).toBe(200);
    // A slow DELETE (a loaded machine) lets retries claimed before it commits go out, and one may
    // still be on its way; none comes after. Long enough for two more retries if the delivery stayed.
    const sentBefore = webhooks.receiver.requests.length;
    await sleep(SCHEDULE[0]! + SCHEDULE[1]! + 500);
    expect(webhooks.receiver.requests.length).toBeLessThanOrEqual(sentBefore + 1);
  });
});
