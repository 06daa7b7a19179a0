import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendAppliedBillingEvent } from '../../helpers/billing.js';
import { ConsoleClient, csrfIn } from '../../helpers/console.js';
import { type Account, call, registerAccount } from '../../helpers/http.js';
import { createPause } from '../../helpers/pauses.js';
import { startTestService, type TestService } from '../../helpers/service.js';

// The console's keys page (prefixes only; rotate after a confirmation, the new
// key shown once) and its usage page (the plan, this month's live pauses
// against the quota, the billing history), over real HTTP, checked against
// what the API says.

const SECRET = 'whsec_console_keys_secret_0123456789';
const FULL_KEY = /svc_(live|test)_[0-9a-f]{48}/g;
/** The whole keys in a page, as its text reads (the new key may wrap only between pieces: <wbr>). */
const keysIn = (html: string) => html.replaceAll('<wbr/>', '').match(FULL_KEY);

let service: TestService;

beforeAll(async () => {
  service = await startTestService({
    env: { PAYMENT_WEBHOOK_SECRET: SECRET, PLAN_QUOTAS: 'free:5,pro:50,scale:unlimited' },
  });
});
afterAll(() => service?.destroy());

async function signedIn(account: Account): Promise<ConsoleClient> {
  const client = new ConsoleClient(service.url);
  await client.signIn(account.email, account.password);
  return client;
}

const meWith = (key: string) => call(service.url, 'GET', '/v1/auth/me', { token: key });
const prefixOf = (key: string) => key.slice(0, 'svc_live_'.length + 6);

describe('keys', () => {
  it('lists both keys by prefix only, and never a whole key', async () => {
    const alice = await registerAccount(service.url);
    const client = await signedIn(alice);
    const page = await client.get('/console/keys');
    expect(page.status).toBe(200);
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(page.text).toContain(`<code>${prefixOf(alice.live)}…</code>`);
    expect(page.text).toContain(`<code>${prefixOf(alice.test)}…</code>`);
    expect(keysIn(page.text)).toBeNull();
    expect(page.text).toContain('aria-current="page">Keys</a>');
    // The API lists the same prefixes.
    const me = await meWith(alice.live);
    expect(me.body.keys.map((k: { prefix: string }) => k.prefix)).toEqual([prefixOf(alice.live), prefixOf(alice.test)]);
  });

  it('rotates only after the confirmation form with its CSRF token, from this site', async () => {
    const bob = await registerAccount(service.url);
    const client = await signedIn(bob);

    const confirm = await client.get('/console/keys/live/rotate');
    expect(confirm.status).toBe(200);
    expect(confirm.text).toContain('Rotate the live key?');
    expect(confirm.text).toContain(`name="prefix" value="${prefixOf(bob.live)}"`);
    expect(keysIn(confirm.text)).toBeNull();
    const csrf = csrfIn(confirm.text);
    const form = { csrf, prefix: prefixOf(bob.live) };

    // Without the token, with a wrong one, from another site, or signed out: 403, nothing rotated.
    const refused = [
      await client.post('/console/keys/live/rotate', { prefix: form.prefix }),
      await client.post('/console/keys/live/rotate', { ...form, csrf: `${csrf}x` }),
      await client.post('/console/keys/live/rotate', form, { origin: 'https://evil.example' }),
      await client.post('/console/keys/live/rotate', form, { 'sec-fetch-site': 'cross-site' }),
      await new ConsoleClient(service.url).post('/console/keys/live/rotate', form),
    ];
    for (const reply of refused) {
      expect(reply.status).toBe(403);
      expect(keysIn(reply.text)).toBeNull();
    }
    // The confirmation page (a GET) rotated nothing either: the old key still works, with its prefix.
    const me = await meWith(bob.live);
    expect(me.status).toBe(200);
    expect(me.body.keys[0].prefix).toBe(prefixOf(bob.live));
  });

  it('rotates a key: the new one works, the old one is refused, and the new one is shown this once', async () => {
    const carol = await registerAccount(service.url);
    const client = await signedIn(carol);
    // The API has seen the key (and keeps it in its cache): the rotation must end it all the same.
    expect((await meWith(carol.test)).status).toBe(200);
    const confirm = await client.get('/console/keys/test/rotate');
    const form = { csrf: csrfIn(confirm.text), prefix: prefixOf(carol.test) };

    const done = await client.post('/console/keys/test/rotate', form, {
      origin: service.url,
      'sec-fetch-site': 'same-origin',
    });
    expect(done.status, done.text).toBe(200);
    expect(done.headers.get('cache-control')).toBe('no-store');
    const shown = keysIn(done.text) ?? [];
    expect(shown).toHaveLength(1);
    const fresh = shown[0]!;
    expect(fresh).toMatch(/^svc_test_/);
    expect(fresh).not.toBe(carol.test);
    expect(done.text).toContain('data-copy=""');
    expect(done.text).toContain(`The old key starting <code>${prefixOf(carol.test)}</code> no longer works`);

    // The API: the old key is refused at once, the new one works, the live key is untouched.
    const old = await meWith(carol.test);
    expect(old.status).toBe(401);
    const me = await meWith(fresh);
    expect(me.status).toBe(200);
    expect(me.body.mode).toBe('test');
    expect((await meWith(carol.live)).status).toBe(200);
    expect((await createPause(service.url, fresh, { title: 'With the new key?' })).mode).toBe('test');

    // Never again: not on the keys page, and a form sent again (a reload) rotates nothing and shows no key.
    const keys = await client.get('/console/keys');
    expect(keysIn(keys.text)).toBeNull();
    expect(keys.text).toContain(`<code>${prefixOf(fresh)}…</code>`);
    expect(keys.text).not.toContain(prefixOf(carol.test));
    expect(keys.text).toMatch(/Rotated <time/);
    const again = await client.post('/console/keys/test/rotate', form);
    expect(again.status).toBe(409);
    expect(again.text).toContain('Key already rotated');
    expect(keysIn(again.text)).toBeNull();
    expect((await meWith(fresh)).status).toBe(200);
  });

  it('answers 404 for a mode that is not one, and 400 for a form without the key it confirms', async () => {
    const dave = await registerAccount(service.url);
    const client = await signedIn(dave);
    const csrf = await client.csrf('/console/keys');
    expect((await client.get('/console/keys/prod/rotate')).status).toBe(404);
    expect((await client.post('/console/keys/prod/rotate', { csrf, prefix: 'svc_live_000000' })).status).toBe(404);
    expect((await client.post('/console/keys/live/rotate', { csrf })).status).toBe(400);
    expect((await meWith(dave.live)).status).toBe(200);
  });
});

const sendBillingEvent = (type: string, object: Record<string, unknown>) =>
  sendAppliedBillingEvent(service.url, SECRET, type, object);

describe('usage', () => {
  it("shows the plan, this month's live pauses against the quota, and an empty history", async () => {
    const erin = await registerAccount(service.url);
    const client = await signedIn(erin);
    const empty = await client.get('/console/usage');
    expect(empty.status).toBe(200);
    expect(empty.text).toContain('aria-current="page">Usage</a>');
    expect(empty.text).toContain('<dd id="plan">free</dd>');
    expect(empty.text).toContain('<strong>0</strong> of 5 pauses this month');
    expect(empty.text).toContain('No billing events yet');

    for (let i = 0; i < 3; i++) await createPause(service.url, erin.live, { title: `Live ${i}` });
    await createPause(service.url, erin.test, { title: 'Test pauses never count' });
    const page = await client.get('/console/usage');
    expect(page.text).toContain('<strong>3</strong> of 5 pauses this month');
    expect(page.text).toMatch(/<meter id="quota" min="0" max="5" value="3"/);

    // The same numbers as the API's.
    const billing = await call(service.url, 'GET', '/v1/billing', { token: erin.live });
    expect(billing.body.usage).toEqual({ live_pauses_used: 3, live_pauses_quota: 5 });
    const { start, end } = billing.body.period;
    expect(page.text).toContain(`<time datetime="${start}">${start.slice(0, 10)}</time>`);
    expect(page.text).toContain(`<time datetime="${end}">${end.slice(0, 10)} 00:00</time> UTC`);
  });

  it('shows the billing history newest first after signed billing webhooks', async () => {
    const frank = await registerAccount(service.url);
    const client = await signedIn(frank);
    await createPause(service.url, frank.live, { title: 'One live pause' });
    const checkout = await sendBillingEvent('checkout.session.completed', {
      client_reference_id: frank.id,
      customer: `cus_${frank.id}`,
      metadata: { plan: 'pro' },
    });
    const upgrade = await sendBillingEvent('customer.subscription.updated', {
      customer: `cus_${frank.id}`,
      status: 'active',
      metadata: { plan: 'scale' },
    });

    const page = await client.get('/console/usage');
    expect(page.text).toContain('<dd id="plan">scale (active)</dd>');
    expect(page.text).toContain('<strong>1</strong> live pause this month (this plan has no limit)');
    expect(page.text).not.toContain('<meter');
    expect(page.text).not.toContain('No billing events yet');
    const rows = [...page.text.matchAll(/<td>(\w+) → (\w+)<\/td>.*?<code>(evt_[0-9a-z_]+)<\/code>/g)].map((m) => [
      m[1],
      m[2],
      m[3],
    ]);
    expect(rows).toEqual([
      ['pro', 'scale', upgrade.id],
      ['free', 'pro', checkout.id],
    ]);
    // The API's history agrees.
    const billing = await call(service.url, 'GET', '/v1/billing', { token: frank.live });
    expect(billing.body.changes.map((c: { event_id: string }) => c.event_id)).toEqual([upgrade.id, checkout.id]);
  });
});
