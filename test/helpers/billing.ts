import { createHmac } from 'node:crypto';
import { expect } from 'vitest';
import { call } from './http.js';

// Signed payment-provider events for the tests that need a plan changed:
// t=<unix>,v1=HMAC-SHA256(secret, "t.body"), as the provider signs them.

export function paymentSignature(body: string, secret: string, t = Math.floor(Date.now() / 1000)): string {
  return `t=${t},v1=${createHmac('sha256', secret).update(`${t}.${body}`).digest('hex')}`;
}

/** Sends one signed provider event to POST /v1/billing/webhook; expects it applied, and returns it. */
export async function sendAppliedBillingEvent(
  baseUrl: string,
  secret: string,
  type: string,
  object: Record<string, unknown>,
) {
  const event = {
    id: `evt_test_${Math.random().toString(36).slice(2)}`,
    object: 'event',
    type,
    created: Math.floor(Date.now() / 1000),
    data: { object },
  };
  const body = JSON.stringify(event);
  const reply = await call(baseUrl, 'POST', '/v1/billing/webhook', {
    rawBody: body,
    headers: { 'content-type': 'application/json', 'payment-signature': paymentSignature(body, secret) },
  });
  expect(reply.status, reply.text).toBe(200);
  expect(reply.body.result).toBe('applied');
  return event;
}
