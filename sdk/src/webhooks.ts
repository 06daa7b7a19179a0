// Verifying (and, for tools such as `pausepoint listen`, making) webhook
// signatures. Every delivery carries two schemes:
// - `X-Service-Signature: sha256=<lowercase hex HMAC-SHA256 of the raw body,
//   keyed with the webhook's secret>`;
// - Standard Webhooks: `webhook-id`, `webhook-timestamp` (Unix seconds) and
//   `webhook-signature: v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`
//   (space-separated entries while a rotated secret still signs), keyed with a
//   `whsec_` secret's base64-decoded bytes, else the secret's UTF-8 bytes.
import { fromBase64, hmacSha256, hmacSha256Hex, timingSafeEqual, toBase64, toBytes } from './crypto.js';
import { WebhookVerificationError } from './errors.js';
import { WEBHOOK_EVENT_TYPES, type WebhookEvent, type WebhookEventType } from './types.js';

/** The request headers of a delivery, lowercase as Node and fetch present them. */
export const WEBHOOK_HEADERS = {
  signature: 'x-service-signature',
  event: 'x-service-event',
  delivery: 'x-service-delivery',
  /** Standard Webhooks: the delivery id (the same as x-service-delivery). */
  id: 'webhook-id',
  timestamp: 'webhook-timestamp',
  standardSignature: 'webhook-signature',
} as const;

/** A request's headers: fetch's `Headers`, or Node's `IncomingHttpHeaders` (lowercase names). */
export type WebhookHeaders = Headers | Record<string, string | readonly string[] | undefined>;

export interface VerifyOptions {
  /** How far `webhook-timestamp` may be from now, in seconds (default 300, as the standard libraries). */
  toleranceSeconds?: number;
  /** Now, for tests (default `Date.now()`). */
  now?: number;
  /**
   * Given headers without `webhook-signature`, check `X-Service-Signature`
   * instead (default false: refused). That scheme has no timestamp, so a
   * replay stripped of the `webhook-*` headers would pass: opt in only for
   * senders that do not sign by Standard Webhooks (such as `pausepoint listen`).
   */
  acceptLegacySignature?: boolean;
}

const DEFAULT_TOLERANCE_SECONDS = 300;

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
 * True when the delivery is signed by `secret`. Pass the raw body, before any
 * JSON parsing: re-serialised JSON is not the same bytes. The second argument
 * is either the `X-Service-Signature` header (checked alone, as before), or
 * the request's headers: then `webhook-signature` with `webhook-id` and
 * `webhook-timestamp` (within `toleranceSeconds` of now), required unless
 * `acceptLegacySignature` lets `X-Service-Signature` stand in for it.
 * Compares in constant time.
 */
export async function verifyWebhookSignature(
  rawBody: RawBody,
  signatureOrHeaders: SignatureHeader | WebhookHeaders,
  secret: string,
  options: VerifyOptions = {},
): Promise<boolean> {
  checkSecret(secret);
  if (!isHeaders(signatureOrHeaders)) return verifySpecSignature(rawBody, signatureOrHeaders, secret);
  const standard = headerOf(signatureOrHeaders, WEBHOOK_HEADERS.standardSignature);
  if (standard.length === 0) {
    // Without a timestamp, a replay stripped of the webhook-* headers: only when the caller opts in.
    if (options.acceptLegacySignature !== true) return false;
    return verifySpecSignature(rawBody, headerOf(signatureOrHeaders, WEBHOOK_HEADERS.signature), secret);
  }
  const [id] = headerOf(signatureOrHeaders, WEBHOOK_HEADERS.id);
  const [timestamp] = headerOf(signatureOrHeaders, WEBHOOK_HEADERS.timestamp);
  if (id === undefined || timestamp === undefined || !/^\d+$/.test(timestamp)) return false;
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  if (Math.abs((options.now ?? Date.now()) / 1000 - Number(timestamp)) > tolerance) return false;
  const expected = encoder.encode(await standardSignature(rawBody, id, timestamp, secret));
  let matched = false;
  // Every entry is compared, so the time taken does not tell which one matched.
  for (const entry of standard.join(' ').split(' ')) {
    if (entry.length > 0 && timingSafeEqual(encoder.encode(entry), expected)) matched = true;
  }
  return matched;
}

async function verifySpecSignature(rawBody: RawBody, signatureHeader: SignatureHeader, secret: string) {
  const candidates = typeof signatureHeader === 'string' ? [signatureHeader] : (signatureHeader ?? []);
  if (candidates.length === 0) return false;
  const expected = encoder.encode(await signWebhookPayload(rawBody, secret));
  let matched = false;
  for (const candidate of candidates) {
    if (timingSafeEqual(encoder.encode(candidate.trim()), expected)) matched = true;
  }
  return matched;
}

/** `v1,<base64>`: the Standard Webhooks signature of these bytes, for this id and timestamp, under `secret`. */
export async function standardSignature(
  rawBody: RawBody,
  id: string,
  timestamp: string | number,
  secret: string,
): Promise<string> {
  checkSecret(secret);
  const prefix = encoder.encode(`${id}.${timestamp}.`);
  const body = toBytes(rawBody);
  const signed = new Uint8Array(prefix.length + body.length);
  signed.set(prefix);
  signed.set(body, prefix.length);
  return `v1,${toBase64(await hmacSha256(standardKey(secret), signed))}`;
}

/** A `whsec_` secret's base64-decoded bytes, else the secret's UTF-8 bytes (as the service keys it). */
function standardKey(secret: string): Uint8Array {
  const decoded = secret.startsWith('whsec_') ? fromBase64(secret.slice('whsec_'.length)) : undefined;
  return decoded ?? encoder.encode(secret);
}

const isHeaders = (value: SignatureHeader | WebhookHeaders): value is WebhookHeaders =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A header's values, whatever shape the headers come in (names matched case-insensitively). */
function headerOf(headers: WebhookHeaders, name: string): string[] {
  if (typeof (headers as Headers).get === 'function' && typeof (headers as Headers).has === 'function') {
    const value = (headers as Headers).get(name);
    return value === null ? [] : [value];
  }
  for (const [key, value] of Object.entries(headers as Record<string, string | readonly string[] | undefined>)) {
    if (key.toLowerCase() !== name || value === undefined) continue;
    return typeof value === 'string' ? [value] : [...value];
  }
  return [];
}

/**
 * Verifies the signature (either scheme, as verifyWebhookSignature), then parses and checks the body: returns the event,
 * typed by its `event` field, or throws a `WebhookVerificationError`
 * (`code` `invalid_signature` or `invalid_payload`). Answer 401 on the former.
 */
export async function parseWebhookEvent(
  rawBody: RawBody,
  signatureOrHeaders: SignatureHeader | WebhookHeaders,
  secret: string,
  options: VerifyOptions = {},
): Promise<WebhookEvent> {
  if (!(await verifyWebhookSignature(rawBody, signatureOrHeaders, secret, options))) {
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
