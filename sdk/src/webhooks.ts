// Verifying (and, for tools such as `pausepoint listen`, making) webhook
// signatures: `X-Service-Signature: sha256=<lowercase hex HMAC-SHA256 of the
// raw body, keyed with the webhook's secret>`.
import { hmacSha256Hex, timingSafeEqual, toBytes } from './crypto.js';
import { WebhookVerificationError } from './errors.js';
import { WEBHOOK_EVENT_TYPES, type WebhookEvent, type WebhookEventType } from './types.js';

/** The request headers of a delivery, lowercase as Node and fetch present them. */
export const WEBHOOK_HEADERS = {
  signature: 'x-service-signature',
  event: 'x-service-event',
  delivery: 'x-service-delivery',
} as const;

/** The raw body exactly as received: a string, a Buffer/Uint8Array or an ArrayBuffer. */
export type RawBody = string | Uint8Array | ArrayBuffer;
/** A header as frameworks hand it over: Node gives `string | string[] | undefined`, fetch `string | null`. */
export type SignatureHeader = string | readonly string[] | null | undefined;

const encoder = new TextEncoder();

/** `sha256=<hex>`: the signature header value for `rawBody` under `secret`. */
export async function signWebhookPayload(rawBody: RawBody, secret: string): Promise<string> {
  checkSecret(secret);
  return `sha256=${await hmacSha256Hex(secret, toBytes(rawBody))}`;
}

/**
 * True when `signatureHeader` is the signature of exactly these bytes under
 * `secret`. Compares in constant time. Pass the raw body, before any JSON
 * parsing: re-serialised JSON is not the same bytes.
 */
export async function verifyWebhookSignature(
  rawBody: RawBody,
  signatureHeader: SignatureHeader,
  secret: string,
): Promise<boolean> {
  checkSecret(secret);
  const candidates = typeof signatureHeader === 'string' ? [signatureHeader] : (signatureHeader ?? []);
  if (candidates.length === 0) return false;
  const expected = encoder.encode(await signWebhookPayload(rawBody, secret));
  let matched = false;
  // Every candidate is compared, so the time taken does not tell which one matched.
  for (const candidate of candidates) {
    if (timingSafeEqual(encoder.encode(candidate.trim()), expected)) matched = true;
  }
  return matched;
}

/**
 * Verifies the signature, then parses and checks the body: returns the event,
 * typed by its `event` field, or throws a `WebhookVerificationError`
 * (`code` `invalid_signature` or `invalid_payload`). Answer 401 on the former.
 */
export async function parseWebhookEvent(
  rawBody: RawBody,
  signatureHeader: SignatureHeader,
  secret: string,
): Promise<WebhookEvent> {
  if (!(await verifyWebhookSignature(rawBody, signatureHeader, secret))) {
    throw new WebhookVerificationError('The webhook signature does not match this body and secret.', {
      code: 'invalid_signature',
    });
  }
  let event: unknown;
  try {
    const text =
      typeof rawBody === 'string' ? rawBody : new TextDecoder('utf-8', { fatal: true }).decode(toBytes(rawBody));
    event = JSON.parse(text);
  } catch (cause) {
    throw new WebhookVerificationError('The webhook body is not JSON.', { code: 'invalid_payload', cause });
  }
  const problem = problemWith(event);
  if (problem) {
    throw new WebhookVerificationError(`The webhook body is not a pausepoint event: ${problem}.`, {
      code: 'invalid_payload',
    });
  }
  return event as WebhookEvent;
}

function checkSecret(secret: string): void {
  if (typeof secret !== 'string' || secret.length === 0) {
    throw new TypeError('pausepoint: a webhook secret is required (the one given when the webhook was registered)');
  }
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const isStringOrNull = (value: unknown) => typeof value === 'string' || value === null;

function problemWith(event: unknown): string | undefined {
  if (!isObject(event)) return 'not an object';
  if (!WEBHOOK_EVENT_TYPES.includes(event.event as WebhookEventType))
    return `unknown event ${JSON.stringify(event.event)}`;
  for (const field of ['pause_id', 'developer_id', 'timestamp'] as const) {
    if (typeof event[field] !== 'string') return `${field} is not a string`;
  }
  const data = event.data;
  if (!isObject(data)) return 'data is not an object';
  if (!isObject(data.metadata)) return 'data.metadata is not an object';
  switch (event.event as WebhookEventType) {
    case 'pause.responded':
      if (typeof data.choice !== 'string') return 'data.choice is not a string';
      if (!isStringOrNull(data.text)) return 'data.text is not a string or null';
      if (typeof data.response_at !== 'string') return 'data.response_at is not a string';
      // On a pause with reviewers only.
      if (data.responded_by !== undefined && data.responded_by !== null) {
        const problem =
          isObject(data.responded_by) && 'slack_user_id' in data.responded_by
            ? problemWithSlackResponder(data.responded_by)
            : problemWithReviewer(data.responded_by);
        if (problem) return `data.responded_by ${problem}`;
      }
      if (data.votes !== undefined && !Array.isArray(data.votes)) return 'data.votes is not an array';
      return undefined;
    case 'pause.timed_out':
      if (!isStringOrNull(data.choice)) return 'data.choice is not a string or null';
      if (typeof data.response_at !== 'string') return 'data.response_at is not a string';
      return undefined;
    case 'pause.cancelled':
      return undefined;
    case 'pause.voted': {
      const reviewerProblem = problemWithReviewer(data.reviewer);
      if (reviewerProblem) return `data.reviewer ${reviewerProblem}`;
      if (typeof data.choice !== 'string') return 'data.choice is not a string';
      if (!isStringOrNull(data.text)) return 'data.text is not a string or null';
      if (typeof data.voted_at !== 'string') return 'data.voted_at is not a string';
      if (!Number.isInteger(data.votes_so_far)) return 'data.votes_so_far is not an integer';
      return undefined;
    }
  }
}

/** What is wrong with a `{slack_user_id, email, name}` Slack user, or undefined. */
function problemWithSlackResponder(user: Record<string, unknown>): string | undefined {
  if (typeof user.slack_user_id !== 'string') return 'has no slack_user_id';
  if (!isStringOrNull(user.email)) return 'email is not a string or null';
  if (typeof user.name !== 'string') return 'has no name';
  return undefined;
}

/** What is wrong with a `{id, email, name}` reviewer, or undefined. */
function problemWithReviewer(reviewer: unknown): string | undefined {
  if (!isObject(reviewer)) return 'is not an object';
  if (typeof reviewer.id !== 'string') return 'has no id';
  if (typeof reviewer.email !== 'string') return 'has no email';
  if (!isStringOrNull(reviewer.name)) return 'name is not a string or null';
  return undefined;
}
