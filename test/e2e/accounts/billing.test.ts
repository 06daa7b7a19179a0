import { createHmac } from 'node:crypto';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Clock } from '../../../src/domain/clock.js';
import { type Account, call, registerAccount } from '../../helpers/http.js';
import { startTestService, type TestService } from '../../helpers/service.js';

const SECRET = 'whsec_test_billing_secret_0123456789';
const now = () => Math.floor(Date.now() / 1000);

/** The provider's scheme, computed here by hand: t=<unix>,v1=HMAC-SHA256(secret, "t.body"). */
function signature(body: string, options: { t?: number; secret?: string } = {}) {
  const t = options.t ?? now();
  return `t=${t},v1=${createHmac('sha256', options.secret ?? SECRET)
    .update(`${t}.${body}`)
    .digest('hex')}`;
}

let eventCounter = 0;
function providerEvent(type: string, object: Record<string, unknown>, created = now()) {
  eventCounter += 1;
  return {
    id: `evt_test_${eventCounter}_${Math.random().toString(36).slice(2)}`,
    object: 'event',
    type,
    created,
    data: { object },
  };
}

let service: TestService;

async function send(event: unknown, header?: string) {
  const body = JSON.stringify(event);
  return call(service.url, 'POST', '/v1/billing/webhook', {
    rawBody: body,
    headers: {
      'content-type': 'application/json',
      ...(header === undefined
        ? { 'payment-signature': signature(body) }
        : header
          ? { 'payment-signature': header }
          : {}),
    },
  });
}

const planOf = async (account: Account) =>
  (await call(service.url, 'GET', '/v1/auth/me', { token: account.live })).body.plan;

beforeAll(async () => {
  service = await startTestService({
    env: { PAYMENT_WEBHOOK_SECRET: SECRET, PLAN_QUOTAS: 'free:3,pro:50,scale:unlimited' },
  });
});
afterAll(() => service.destroy());

describe('Payment-Signature', () => {
  it('accepts a valid signature, by hand and from the provider library, and applies the event', async () => {
    const dev = await registerAccount(service.url);
    const event = providerEvent('checkout.session.completed', {
      client_reference_id: dev.id,
      customer: 'cus_hand',
      metadata: { plan: 'pro' },
    });
    const reply = await send(event);
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body).toEqual({ received: true, result: 'applied' });
    expect(await planOf(dev)).toBe('pro');

    const other = await registerAccount(service.url);
    const second = providerEvent('checkout.session.completed', {
      client_reference_id: other.id,
      metadata: { plan: 'scale' },
    });
    const payload = JSON.stringify(second);
    const header = Stripe.webhooks.generateTestHeaderString({ payload, secret: SECRET });
    const viaLibrary = await call(service.url, 'POST', '/v1/billing/webhook', {
      rawBody: payload,
      headers: { 'content-type': 'application/json', 'payment-signature': header },
    });
    expect(viaLibrary.body.result).toBe('applied');
    expect(await planOf(other)).toBe('scale');
  });

  it('accepts a header with several v1 values when any one matches', async () => {
    const dev = await registerAccount(service.url);
    const event = providerEvent('checkout.session.completed', {
      client_reference_id: dev.id,
      metadata: { plan: 'pro' },
    });
    const body = JSON.stringify(event);
    const t = now();
    const good = signature(body, { t }).split('v1=')[1];
    const header = `t=${t},v1=${'0'.repeat(64)},v1=${good}`;
    expect((await send(event, header)).body.result).toBe('applied');
  });

  it.each([
    ['missing', () => ''],
    ['malformed', () => 'garbage'],
    ['wrong secret', (body: string) => signature(body, { secret: 'whsec_not_the_right_one_000' })],
    // Clear of the 300 s edge, so a second ticking over mid-test cannot move the answer.
    ['stale (310 s old)', (body: string) => signature(body, { t: now() - 310 })],
    ['from the future (310 s ahead)', (body: string) => signature(body, { t: now() + 310 })],
    ['no v1', () => `t=${now()}`],
    ['over another body', (body: string) => signature(`${body} `)],
  ])('refuses a %s signature with 400 and changes nothing', async (_name, makeHeader) => {
    const dev = await registerAccount(service.url);
    const event = providerEvent('checkout.session.completed', {
      client_reference_id: dev.id,
      metadata: { plan: 'pro' },
    });
    const reply = await send(event, makeHeader(JSON.stringify(event)) || '');
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe('invalid_signature');
    expect(await planOf(dev)).toBe('free');
    const stored = await service.store.db.selectFrom('billing_events').selectAll().where('id', '=', event.id).execute();
    expect(stored).toEqual([]);
  });

  it('refuses a body altered by one byte after signing', async () => {
    const dev = await registerAccount(service.url);
    const body = JSON.stringify(
      providerEvent('checkout.session.completed', { client_reference_id: dev.id, metadata: { plan: 'pro' } }),
    );
    const header = signature(body);
    const altered = body.replace('"pro"', '"prp"');
    const reply = await call(service.url, 'POST', '/v1/billing/webhook', {
      rawBody: altered,
      headers: { 'content-type': 'application/json', 'payment-signature': header },
    });
    expect(reply.status).toBe(400);
    expect(await planOf(dev)).toBe('free');
  });

  it('answers 503 not_configured when no PAYMENT_WEBHOOK_SECRET is set, while the rest runs', async () => {
    const bare = await startTestService();
    try {
      const body = JSON.stringify(providerEvent('checkout.session.completed', {}));
      const reply = await call(bare.url, 'POST', '/v1/billing/webhook', {
        rawBody: body,
        headers: { 'content-type': 'application/json', 'payment-signature': signature(body) },
      });
      expect(reply.status).toBe(503);
      expect(reply.body.error.code).toBe('not_configured');
      const dev = await registerAccount(bare.url);
      expect((await call(bare.url, 'GET', '/v1/billing', { token: dev.live })).body.plan).toBe('free');
    } finally {
      await bare.destroy();
    }
  });
});

describe('events', () => {
  it('applies each provider event id once; a replay returns 200 and changes nothing', async () => {
    const dev = await registerAccount(service.url);
    const checkout = providerEvent('checkout.session.completed', {
      client_reference_id: dev.id,
      customer: `cus_${dev.id}`,
      metadata: { plan: 'pro' },
    });
    expect((await send(checkout)).body.result).toBe('applied');
    const cancel = providerEvent('customer.subscription.deleted', { customer: `cus_${dev.id}` });
    expect((await send(cancel)).body.result).toBe('applied');
    expect(await planOf(dev)).toBe('free');
    // The same checkout again (e.g. the provider retrying): no resurrection.
    const replay = await send(checkout);
    expect(replay.status).toBe(200);
    expect(replay.body.result).toBe('duplicate');
    expect(await planOf(dev)).toBe('free');
    // Concurrent duplicates: exactly one applies.
    const fresh = providerEvent(
      'customer.subscription.updated',
      { customer: `cus_${dev.id}`, status: 'active', metadata: { plan: 'scale' } },
      now() + 1, // after the cancellation above, even within the same second
    );
    const results = await Promise.all(Array.from({ length: 6 }, () => send(fresh)));
    expect(results.map((r) => r.body.result).sort()).toEqual(['applied', ...Array(5).fill('duplicate')]);
  });

  it('maps subscription events: metadata.plan or price.lookup_key, active/trialing keep it, other statuses and deletion mean free', async () => {
    const dev = await registerAccount(service.url);
    const customer = `cus_${dev.id}`;
    await send(providerEvent('checkout.session.completed', { client_reference_id: dev.id, customer }));
    expect(await planOf(dev)).toBe('free'); // a checkout without a plan only links the customer
    const t = now() - 100;
    await send(
      providerEvent(
        'customer.subscription.created',
        { customer, status: 'trialing', items: { data: [{ price: { lookup_key: 'pro' } }] } },
        t,
      ),
    );
    expect(await planOf(dev)).toBe('pro');
    await send(
      providerEvent(
        'customer.subscription.updated',
        { customer, status: 'active', metadata: { plan: 'scale' } },
        t + 1,
      ),
    );
    expect(await planOf(dev)).toBe('scale');
    await send(
      providerEvent(
        'customer.subscription.updated',
        { customer, status: 'past_due', metadata: { plan: 'scale' } },
        t + 2,
      ),
    );
    expect(await planOf(dev)).toBe('free');
    await send(
      providerEvent('customer.subscription.updated', { customer, status: 'active', metadata: { plan: 'pro' } }, t + 3),
    );
    expect(await planOf(dev)).toBe('pro');
    await send(providerEvent('customer.subscription.deleted', { customer, status: 'canceled' }, t + 4));
    expect(await planOf(dev)).toBe('free');

    const history = await call(service.url, 'GET', '/v1/billing', { token: dev.test });
    expect(history.status).toBe(200);
    expect(history.body).toMatchObject({ plan: 'free', status: 'canceled' });
    expect(history.body.changes.map((c: { to_plan: string }) => c.to_plan)).toEqual([
      'free',
      'pro',
      'free',
      'scale',
      'pro',
    ]);
    expect(history.body.changes[0]).toMatchObject({ from_plan: 'pro', event_type: 'customer.subscription.deleted' });
  });

  it('does not let an older event arriving late resurrect a plan', async () => {
    const dev = await registerAccount(service.url);
    const customer = `cus_${dev.id}`;
    await send(
      providerEvent(
        'checkout.session.completed',
        { client_reference_id: dev.id, customer, metadata: { plan: 'pro' } },
        now() - 60,
      ),
    );
    const t = now() - 30;
    await send(providerEvent('customer.subscription.deleted', { customer }, t));
    const late = await send(
      providerEvent('customer.subscription.updated', { customer, status: 'active', metadata: { plan: 'pro' } }, t - 10),
    );
    expect(late.body.result).toBe('ignored');
    expect(await planOf(dev)).toBe('free');
    const sameSecond = await send(
      providerEvent('customer.subscription.updated', { customer, status: 'active', metadata: { plan: 'pro' } }, t),
    );
    expect(sameSecond.body.result).toBe('ignored');
    expect(await planOf(dev)).toBe('free');
    // A newer event does apply.
    await send(
      providerEvent('customer.subscription.created', { customer, status: 'active', metadata: { plan: 'pro' } }, t + 5),
    );
    expect(await planOf(dev)).toBe('pro');
  });

  it('answers 200 and changes nothing for unknown customers, unknown plans and other event types', async () => {
    const dev = await registerAccount(service.url);
    const cases = [
      providerEvent('customer.subscription.updated', {
        customer: 'cus_nobody',
        status: 'active',
        metadata: { plan: 'pro' },
      }),
      providerEvent('checkout.session.completed', { client_reference_id: 'dev_unknown', metadata: { plan: 'pro' } }),
      providerEvent('checkout.session.completed', { client_reference_id: dev.id, metadata: { plan: 'platinum' } }),
      providerEvent('invoice.paid', { customer: 'cus_x' }),
    ];
    for (const event of cases) {
      const reply = await send(event);
      expect(reply.status).toBe(200);
      expect(reply.body.result).toBe('ignored');
    }
    expect(await planOf(dev)).toBe('free');
    const logged = service.logs.filter((line) => line.includes('billing event ignored'));
    expect(logged.length).toBeGreaterThanOrEqual(4);
  });

  it('refuses a verified body that is not a provider event with 400', async () => {
    const reply = await send({ hello: 'world' });
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe('invalid_request');
  });
});

describe('quota', () => {
  it('counts live pauses only, and refuses the one over the quota with 402 and its reset time', async () => {
    const dev = await registerAccount(service.url);
    for (let i = 0; i < 3; i++) {
      expect(
        (await call(service.url, 'POST', '/v1/pause', { token: dev.live, body: { title: `live ${i}` } })).status,
      ).toBe(201);
    }
    for (let i = 0; i < 5; i++) {
      expect(
        (await call(service.url, 'POST', '/v1/pause', { token: dev.test, body: { title: `test ${i}` } })).status,
      ).toBe(201);
    }
    const over = await call(service.url, 'POST', '/v1/pause', { token: dev.live, body: { title: 'one too many' } });
    expect(over.status).toBe(402);
    expect(over.body.error.code).toBe('quota_exceeded');
    const period = new Date();
    const resetsAt = new Date(Date.UTC(period.getUTCFullYear(), period.getUTCMonth() + 1, 1)).toISOString();
    expect(over.body.error.details).toEqual({ quota: 3, resets_at: resetsAt });
    const me = await call(service.url, 'GET', '/v1/auth/me', { token: dev.test });
    expect(me.body.usage).toMatchObject({ live_pauses_used: 3, live_pauses_quota: 3, period_end: resetsAt });
    // The refused pause was not created.
    expect((await call(service.url, 'GET', '/v1/pause', { token: dev.live })).body.data).toHaveLength(3);
  });

  it('creates exactly the quota under 50 concurrent creates', async () => {
    const dev = await registerAccount(service.url);
    await send(providerEvent('checkout.session.completed', { client_reference_id: dev.id, metadata: { plan: 'pro' } }));
    // pro is 50: use 40 first, then race 50 for the last 10.
    for (let i = 0; i < 40; i++)
      await call(service.url, 'POST', '/v1/pause', { token: dev.live, body: { title: `p${i}` } });
    const replies = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        call(service.url, 'POST', '/v1/pause', { token: dev.live, body: { title: `race ${i}` } }),
      ),
    );
    expect(replies.filter((r) => r.status === 201)).toHaveLength(10);
    expect(replies.filter((r) => r.status === 402)).toHaveLength(40);
    const rows = await service.store.db
      .selectFrom('pauses')
      .select('id')
      .where('developer_id', '=', dev.id)
      .where('mode', '=', 'live')
      .execute();
    expect(rows).toHaveLength(50);
  });

  it('is unlimited on a plan configured as unlimited', async () => {
    const dev = await registerAccount(service.url);
    await send(
      providerEvent('checkout.session.completed', { client_reference_id: dev.id, metadata: { plan: 'scale' } }),
    );
    for (let i = 0; i < 6; i++) {
      expect((await call(service.url, 'POST', '/v1/pause', { token: dev.live, body: { title: `u${i}` } })).status).toBe(
        201,
      );
    }
    const me = await call(service.url, 'GET', '/v1/auth/me', { token: dev.live });
    expect(me.body.usage).toMatchObject({ live_pauses_used: 6, live_pauses_quota: null });
  });

  it('starts afresh in a new calendar month (UTC)', async () => {
    let current = Date.parse('2026-01-31T23:59:58.000Z');
    const clock: Clock = { now: () => new Date(current) };
    const timed = await startTestService({ clock, env: { PLAN_QUOTAS: 'free:2' } });
    try {
      const dev = await registerAccount(timed.url);
      for (let i = 0; i < 2; i++)
        await call(timed.url, 'POST', '/v1/pause', { token: dev.live, body: { title: `jan ${i}` } });
      const refused = await call(timed.url, 'POST', '/v1/pause', { token: dev.live, body: { title: 'jan 3' } });
      expect(refused.status).toBe(402);
      expect(refused.body.error.details.resets_at).toBe('2026-02-01T00:00:00.000Z');
      current = Date.parse('2026-02-01T00:00:00.000Z');
      expect((await call(timed.url, 'POST', '/v1/pause', { token: dev.live, body: { title: 'feb 1' } })).status).toBe(
        201,
      );
      const me = await call(timed.url, 'GET', '/v1/auth/me', { token: dev.live });
      expect(me.body.usage).toEqual({
        period_start: '2026-02-01T00:00:00.000Z',
        period_end: '2026-03-01T00:00:00.000Z',
        live_pauses_used: 1,
        live_pauses_quota: 2,
      });
    } finally {
      await timed.destroy();
    }
  });
});
