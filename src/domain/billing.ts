import type Stripe from 'stripe';

// The payment provider's webhook: its signature scheme and what its events
// mean for a developer's plan. Pure: no database here.

export const SIGNATURE_TOLERANCE_SECONDS = 300;

/** What a `Payment-Signature` header says: one timestamp and the v1 signatures over it. */
export interface PaymentSignature {
  /** Unix seconds. */
  timestamp: number;
  signatures: string[];
}

const SIGNATURE_ITEM = /^([a-z][a-z0-9]*)=(.+)$/;
const TIMESTAMP = /^\d{1,12}$/;
const HEX_SHA256 = /^[0-9a-f]{64}$/;

/**
 * Reads `t=<unix>,v1=<hex>[,v1=…]` strictly, the one place it is read: every
 * item is name=value without spaces, `t` appears exactly once, and there is
 * at least one `v1`. Other schemes (the provider's `v0`) are ignored. Null
 * for anything else, so no check can read a different timestamp than another.
 */
export function parsePaymentSignature(header: string): PaymentSignature | null {
  let timestamp: number | undefined;
  const signatures: string[] = [];
  for (const item of header.split(',')) {
    const match = SIGNATURE_ITEM.exec(item);
    if (!match) return null;
    const [, name, value] = match as unknown as [string, string, string];
    if (name === 't') {
      if (timestamp !== undefined || !TIMESTAMP.test(value)) return null;
      timestamp = Number(value);
    } else if (name === 'v1') {
      if (!HEX_SHA256.test(value)) return null;
      signatures.push(value);
    }
  }
  if (timestamp === undefined || signatures.length === 0) return null;
  return { timestamp, signatures };
}

/**
 * Verifies `Payment-Signature` over the raw body: HMAC-SHA256 of "t.body",
 * any v1 may match, at most 300 s old and at most 300 s ahead. The header is
 * parsed here once; the provider's own library then checks the signature
 * (constant-time) against a header rebuilt from what was parsed, so it judges
 * the same timestamp as the check for the future it does not make itself.
 */
export async function verifyPaymentSignature(
  rawBody: Buffer,
  header: string,
  secret: string,
  nowMs: number,
): Promise<boolean> {
  const parsed = parsePaymentSignature(header);
  if (!parsed) return false;
  // Whole seconds, as the library counts the age of a signature.
  if (parsed.timestamp - Math.floor(nowMs / 1000) > SIGNATURE_TOLERANCE_SECONDS) return false;
  const scheme = (await paymentLibrary()).webhooks.signature;
  if (!scheme) throw new Error('the payment library has no signature verifier');
  const canonical = [`t=${parsed.timestamp}`, ...parsed.signatures.map((signature) => `v1=${signature}`)].join(',');
  try {
    scheme.verifyHeader(rawBody, canonical, secret, SIGNATURE_TOLERANCE_SECONDS, undefined, nowMs);
  } catch {
    return false;
  }
  return true;
}

// The library is large and only the billing webhook needs it: load it then.
let library: Promise<typeof Stripe> | undefined;
const paymentLibrary = () => {
  library ??= import('stripe').then((module) => module.default);
  return library;
};

export interface ProviderEvent {
  id: string;
  type: string;
  created: number;
  object: Record<string, any>;
}

/** The provider event's fields we rely on, or null when it is not a usable event. */
export function readProviderEvent(body: unknown): ProviderEvent | null {
  const event = body as { id?: unknown; type?: unknown; created?: unknown; data?: { object?: unknown } } | null;
  if (!event || typeof event !== 'object') return null;
  if (typeof event.id !== 'string' || event.id.length === 0 || event.id.length > 255) return null;
  if (typeof event.type !== 'string' || event.type.length > 255) return null;
  // Unix seconds: a whole, non-negative number (stored as a 64-bit integer).
  if (typeof event.created !== 'number' || !Number.isSafeInteger(event.created) || event.created < 0) return null;
  const object = event.data?.object;
  if (!object || typeof object !== 'object') return null;
  return { id: event.id, type: event.type, created: event.created, object: object as Record<string, any> };
}

/** What an event asks of us. */
export type BillingIntent =
  | { kind: 'checkout'; developerId: string | null; customerId: string | null; plan: string | null }
  | {
      kind: 'subscription';
      customerId: string | null;
      developerId: string | null;
      plan: string;
      status: string;
      ended: boolean;
    }
  | { kind: 'ignore'; reason: string };

const KEEPS_PLAN = new Set(['active', 'trialing']);
const text = (value: unknown) => (typeof value === 'string' && value.length > 0 ? value : null);

export function interpret(event: ProviderEvent): BillingIntent {
  const object = event.object;
  switch (event.type) {
    case 'checkout.session.completed':
      return {
        kind: 'checkout',
        developerId: text(object.client_reference_id),
        customerId: text(object.customer),
        plan: text(object.metadata?.plan),
      };
    case 'customer.subscription.created':
    case 'customer.subscription.updated':
    case 'customer.subscription.deleted': {
      const ended = event.type === 'customer.subscription.deleted';
      const status = ended ? 'canceled' : (text(object.status) ?? 'unknown');
      const paidPlan = text(object.metadata?.plan) ?? text(object.items?.data?.[0]?.price?.lookup_key);
      const plan = !ended && KEEPS_PLAN.has(status) ? paidPlan : 'free';
      if (!plan) return { kind: 'ignore', reason: 'subscription names no plan (metadata.plan or price.lookup_key)' };
      return {
        kind: 'subscription',
        customerId: text(object.customer),
        developerId: text(object.metadata?.developer_id),
        plan,
        status,
        ended,
      };
    }
    default:
      return { kind: 'ignore', reason: `event type ${event.type} is not used` };
  }
}
