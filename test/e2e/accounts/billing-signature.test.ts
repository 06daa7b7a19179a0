import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Account, call, registerAccount } from '../../helpers/http.js';
import { startTestService, type TestService } from '../../helpers/service.js';

// How POST /v1/billing/webhook reads Payment-Signature: once, strictly, so the
// signature check and the age checks judge the same timestamp. A header the
// provider's library and our own checks could read differently is refused.

const SECRET = 'whsec_test_signature_parsing_0123456789';
const now = () => Math.floor(Date.now() / 1000);
const YEAR = 365 * 24 * 60 * 60;

const hmac = (t: number | string, body: string) => createHmac('sha256', SECRET).update(`${t}.${body}`).digest('hex');

let service: TestService;

beforeAll(async () => {
  service = await startTestService({ env: { PAYMENT_WEBHOOK_SECRET: SECRET, PLAN_QUOTAS: 'free:3,pro:50' } });
});
afterAll(() => service?.destroy());

let events = 0;
function checkout(dev: Account) {
  events += 1;
  return JSON.stringify({
    id: `evt_sig_${events}_${Math.random().toString(36).slice(2)}`,
    object: 'event',
    type: 'checkout.session.completed',
    created: now(),
    data: { object: { client_reference_id: dev.id, metadata: { plan: 'pro' } } },
  });
}

const post = (body: string, header: string) =>
  call(service.url, 'POST', '/v1/billing/webhook', {
    rawBody: body,
    headers: { 'content-type': 'application/json', 'payment-signature': header },
  });

const planOf = async (dev: Account) => (await call(service.url, 'GET', '/v1/auth/me', { token: dev.live })).body.plan;

describe('Payment-Signature parsing', () => {
  it.each([
    // The replay this rule is for: a signature dated a year ahead stays valid
    // for a year, while the future check read only the first t.
    [
      'a current t before a signed one a year ahead',
      (body: string, t: number) => `t=${t},t=${t + YEAR},v1=${hmac(t + YEAR, body)}`,
    ],
    [
      'a signed t a year ahead before a current one',
      (body: string, t: number) => `t=${t + YEAR},t=${t},v1=${hmac(t, body)}`,
    ],
    ['the same t twice', (body: string, t: number) => `t=${t},t=${t},v1=${hmac(t, body)}`],
    [
      'a space-prefixed t the library would skip',
      (body: string, t: number) => ` t=${t},t=${t + YEAR},v1=${hmac(t + YEAR, body)}`,
    ],
    ['a t that is not a whole number', (body: string, t: number) => `t=${t}x,v1=${hmac(t, body)}`],
    ['a t with a sign', (body: string, t: number) => `t=+${t},v1=${hmac(t, body)}`],
    ['an item without a value', (body: string, t: number) => `t=${t},v1=${hmac(t, body)},junk`],
    ['a v1 that is not hex', (body: string, t: number) => `t=${t},v1=${hmac(t, body)},v1=not-hex`],
  ])('refuses %s with 400 invalid_signature and changes nothing', async (_name, makeHeader) => {
    const dev = await registerAccount(service.url);
    const body = checkout(dev);
    const reply = await post(body, makeHeader(body, now()));
    expect(reply.status, reply.text).toBe(400);
    expect(reply.body.error.code).toBe('invalid_signature');
    expect(await planOf(dev)).toBe('free');
  });

  it('accepts the provider header with schemes it does not use (v0) beside v1', async () => {
    const dev = await registerAccount(service.url);
    const body = checkout(dev);
    const t = now();
    const reply = await post(body, `t=${t},v1=${hmac(t, body)},v0=${'ab'.repeat(32)}`);
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body.result).toBe('applied');
    expect(await planOf(dev)).toBe('pro');
  });

  it('still refuses the one signed t when it is a year ahead', async () => {
    const dev = await registerAccount(service.url);
    const body = checkout(dev);
    const t = now() + YEAR;
    const reply = await post(body, `t=${t},v1=${hmac(t, body)}`);
    expect(reply.status).toBe(400);
    expect(await planOf(dev)).toBe('free');
  });
});
