import { createHmac } from 'node:crypto';
import { Agent, fetch as undiciFetch } from 'undici';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import {
  type EventRecord,
  type Fetch,
  Pausepoint,
  PausepointError,
  parseWebhookEvent,
  verifyWebhookSignature,
} from '../../sdk/src/index.js';
import { type Account, call, registerAccount } from '../helpers/http.js';
import { eventually, tokenOf } from '../helpers/pauses.js';
import { webhookTests } from '../helpers/webhook-service.js';

// The SDK's webhook and event methods against a real service that delivers to
// a real HTTPS receiver; what it delivers is checked with the SDK's verifier.
const SECRET = 'whsec_sdk_test_0123456789abcdef';

const webhooks = webhookTests({
  env: { WEBHOOK_RETRY_SCHEDULE_MS: '200,200,200' },
  defaultResponse: { status: 204, body: '' },
});
let dev: Account;
let client: Pausepoint;

beforeAll(async () => {
  dev = await registerAccount(webhooks.service.url);
  client = new Pausepoint({ apiKey: dev.test, baseUrl: webhooks.service.url });
});

describe('webhooks', () => {
  it('creates, lists and deletes webhooks', async () => {
    const own = new Pausepoint({
      apiKey: (await registerAccount(webhooks.service.url)).test,
      baseUrl: webhooks.service.url,
    });
    const webhook = await own.webhooks.create({
      url: `${webhooks.receiver.url}/a`,
      events: ['pause.responded', 'pause.timed_out'],
      secret: SECRET,
    });
    expect(webhook).toMatchObject({
      id: expect.stringMatching(/^wh_/),
      object: 'webhook',
      mode: 'test',
      url: `${webhooks.receiver.url}/a`,
      events: ['pause.responded', 'pause.timed_out'],
    });
    expect(webhook).not.toHaveProperty('secret');
    expect(await own.webhooks.list().toArray()).toEqual([webhook]);
    expect(await own.webhooks.delete(webhook.id)).toEqual({ id: webhook.id, object: 'webhook', deleted: true });
    expect(await own.webhooks.list().toArray()).toEqual([]);
    await expect(own.webhooks.delete(webhook.id)).rejects.toMatchObject({ status: 404, code: 'not_found' });
  });

  it('refuses a private URL with a typed error', async () => {
    const error = await client.webhooks
      .create({ url: 'https://10.0.0.1/hook', events: ['pause.responded'], secret: SECRET })
      .catch((e) => e);
    expect(error).toBeInstanceOf(PausepointError);
    expect(error).toMatchObject({ status: 400, code: 'invalid_webhook_url' });
  });

  it('lists deliveries, and the delivered body verifies and parses with the SDK', async () => {
    const webhook = await client.webhooks.create({
      url: `${webhooks.receiver.url}/hook`,
      events: ['pause.responded'],
      secret: SECRET,
    });
    const pause = await client.pauses.create({ title: 'Deliver me?', allow_text: true, metadata: { ticket: 7 } });
    await call(webhooks.service.url, 'POST', `/v1/respond/${tokenOf(pause)}`, {
      body: { choice: 'approve', text: 'yes' },
    });
    const [request] = await webhooks.receiver.waitForRequests(1);
    const header = request!.headers['x-service-signature'] as string;

    expect(await verifyWebhookSignature(request!.body, header, SECRET)).toBe(true);
    expect(await verifyWebhookSignature(request!.body, header, `${SECRET}x`)).toBe(false);
    const event = await parseWebhookEvent(request!.body, header, SECRET);
    expect(event.event).toBe('pause.responded');
    if (event.event !== 'pause.responded') throw new Error('unreachable');
    // Narrowed by the union: data.choice is a string here.
    const choice: string = event.data.choice;
    expect(choice).toBe('approve');
    expect(event).toMatchObject({
      pause_id: pause.id,
      developer_id: dev.id,
      data: { choice: 'approve', text: 'yes', metadata: { ticket: 7 } },
    });

    await eventually(async () => {
      const deliveries = await client.webhooks.deliveries(webhook.id).toArray();
      expect(deliveries).toHaveLength(1);
      expect(deliveries[0]).toMatchObject({
        object: 'delivery',
        webhook_id: webhook.id,
        event: 'pause.responded',
        pause_id: pause.id,
        status: 'succeeded',
        attempts: 1,
        last_status_code: 204,
      });
      expect(deliveries[0]!.id).toBe(request!.headers['x-service-delivery']);
    });
    await client.webhooks.delete(webhook.id);
  });

  it('pages through deliveries and re-queues a failed one', async () => {
    const webhook = await client.webhooks.create({
      url: `${webhooks.receiver.url}/fail`,
      events: ['pause.cancelled'],
      secret: SECRET,
    });
    webhooks.receiver.setDefault({ status: 500 });
    try {
      for (let i = 0; i < 3; i += 1) {
        await client.pauses.cancel((await client.pauses.create({ title: `Fail ${i}?` })).id);
      }
      let deliveries: Awaited<ReturnType<ReturnType<typeof client.webhooks.deliveries>['toArray']>> = [];
      await eventually(async () => {
        deliveries = await client.webhooks.deliveries(webhook.id, { limit: 2 }).toArray();
        expect(deliveries.map((delivery) => delivery.status)).toEqual(['failed', 'failed', 'failed']);
      }, 15_000);
      expect(new Set(deliveries.map((delivery) => delivery.id)).size).toBe(3);

      webhooks.receiver.setDefault({ status: 204, body: '' });
      const retried = await client.webhooks.retryDelivery(webhook.id, deliveries[0]!.id);
      // The answer is the delivery as re-queued, whatever the worker the retry
      // woke has done since (it may have sent it already).
      expect(retried).toMatchObject({
        id: deliveries[0]!.id,
        status: 'pending',
        attempts: 0,
        completed_at: null,
        last_status_code: 500,
      });
      expect(retried.next_attempt_at).toBe(retried.updated_at);
      await eventually(async () => {
        const [latest] = await client.webhooks.deliveries(webhook.id, { limit: 1 }).toArray(1);
        expect(latest).toMatchObject({ id: deliveries[0]!.id, status: 'succeeded' });
      }, 10_000);
    } finally {
      webhooks.receiver.setDefault({ status: 204, body: '' });
      await client.webhooks.delete(webhook.id);
    }
  });

  it('verifies either scheme from the request headers, rotates the secret, reads attempts, enables and recovers', async () => {
    const webhook = await client.webhooks.create({
      url: `${webhooks.receiver.url}/ops`,
      events: ['pause.cancelled'],
      secret: SECRET,
    });
    expect(webhook).toMatchObject({ status: 'active', disabled_reason: null });
    const rotated = await client.webhooks.rotateSecret(webhook.id);
    expect(rotated.secret).toMatch(/^whsec_/);
    const since = new Date(Date.now() - 1000).toISOString();
    await client.pauses.cancel((await client.pauses.create({ title: 'Rotated?' })).id);
    const [request] = await webhooks.receiver.waitForRequests(1);
    const { headers, body } = request!;
    // The headers as Node gives them: Standard Webhooks, with both secrets during the overlap.
    expect(await verifyWebhookSignature(body, headers, rotated.secret)).toBe(true);
    expect(await verifyWebhookSignature(body, headers, SECRET)).toBe(true);
    expect(await verifyWebhookSignature(body, headers, `${SECRET}x`)).toBe(false);
    // As fetch gives them, and too old for the tolerance.
    const fetchHeaders = new Headers(
      Object.entries(headers).map(([name, value]) => [name, String(value)] as [string, string]),
    );
    expect(await verifyWebhookSignature(body, fetchHeaders, rotated.secret)).toBe(true);
    expect(await verifyWebhookSignature(body, fetchHeaders, rotated.secret, { now: Date.now() + 600_000 })).toBe(false);
    // SPEC's header alone: the new secret's.
    expect(await verifyWebhookSignature(body, headers['x-service-signature'], rotated.secret)).toBe(true);
    expect((await parseWebhookEvent(body, headers, SECRET)).event).toBe('pause.cancelled');

    const delivery = await client.webhooks.getDelivery(webhook.id, String(headers['webhook-id']));
    await eventually(async () => {
      const read = await client.webhooks.getDelivery(webhook.id, String(headers['webhook-id']));
      expect(read.attempts).toEqual([expect.objectContaining({ status_code: 204, error: null })]);
    });
    expect(delivery.id).toBe(headers['webhook-id']);
    expect(await client.webhooks.enable(webhook.id)).toMatchObject({ id: webhook.id, status: 'active' });
    expect(await client.webhooks.recover(webhook.id, { since })).toEqual({
      object: 'recovery',
      webhook_id: webhook.id,
      requeued: 0,
      added: 0,
    });
    await expect(client.webhooks.recover(webhook.id, { since: 'yesterday' })).rejects.toMatchObject({ status: 400 });
    await client.webhooks.delete(webhook.id);
  });
});

describe('events', () => {
  it('lists events with their exact webhook payloads', async () => {
    const own = new Pausepoint({
      apiKey: (await registerAccount(webhooks.service.url)).test,
      baseUrl: webhooks.service.url,
    });
    const pause = await own.pauses.create({ title: 'An event?' });
    await own.pauses.cancel(pause.id);
    const page = await own.events.list();
    expect(page.data).toHaveLength(1);
    expect(page.data[0]).toMatchObject({ object: 'event', type: 'pause.cancelled', pause_id: pause.id });
    expect(page.data[0]!.payload).toMatchObject({ event: 'pause.cancelled', pause_id: pause.id });
    // The payload re-serialised is the body that would be signed and delivered.
    const body = JSON.stringify(page.data[0]!.payload);
    const signature = `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`;
    expect((await parseWebhookEvent(body, signature, SECRET)).event).toBe('pause.cancelled');
  });

  it('listens: yields each new event once, as it happens, until aborted', async () => {
    // Its own connection pool, closed at the end: a request aborted while
    // connecting can leave a connection that never sends anything, and the
    // service's graceful stop would wait for it.
    const agent = new Agent();
    const fetch: Fetch = (input, init) =>
      undiciFetch(input, { ...(init as object), dispatcher: agent }) as unknown as Promise<Response>;
    onTestFinished(() => agent.destroy());
    const own = new Pausepoint({
      apiKey: (await registerAccount(webhooks.service.url)).test,
      baseUrl: webhooks.service.url,
      fetch,
    });
    const before = await own.pauses.create({ title: 'Before listening?' });
    await own.pauses.cancel(before.id);

    const controller = new AbortController();
    const received: EventRecord[] = [];
    let ready!: () => void;
    const isReady = new Promise<void>((resolve) => (ready = resolve));
    const listening = (async () => {
      for await (const event of own.events.listen({ signal: controller.signal, onReady: () => ready() })) {
        received.push(event);
      }
    })();
    await isReady;
    const first = await own.pauses.create({ title: 'First?' });
    const second = await own.pauses.create({ title: 'Second?' });
    await own.pauses.cancel(first.id);
    await call(webhooks.service.url, 'POST', `/v1/respond/${tokenOf(second)}`, { body: { choice: 'reject' } });
    await eventually(() => expect(received.map((event) => event.pause_id)).toEqual([first.id, second.id]), 10_000);
    controller.abort();
    await listening;
    expect(received.map((event) => event.type)).toEqual(['pause.cancelled', 'pause.responded']);

    // `since` replays from a time, each event once.
    const replayed: EventRecord[] = [];
    const replay = new AbortController();
    for await (const event of own.events.listen({ since: new Date(Date.now() - 60_000), signal: replay.signal })) {
      replayed.push(event);
      if (replayed.length === 3) replay.abort();
    }
    expect(replayed.map((event) => event.pause_id)).toEqual([before.id, first.id, second.id]);
  });
});
