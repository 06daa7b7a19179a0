import { randomBytes } from 'node:crypto';
import { hmacSha256 } from './crypto.js';
import type { Mode } from './keys.js';

// The rules of a webhook registration, the same for the API, the console and the CLI.

/** A registered webhook as its owner sees it: never its secret. */
export interface Webhook {
  id: string;
  mode: Mode;
  url: string;
  /** The event types it is sent. */
  events: string[];
  createdAt: string;
  /** `active`, or `disabled` (no deliveries; events are still recorded) with why. */
  status: WebhookStatus;
  disabledReason: string | null;
}

export type WebhookStatus = 'active' | 'disabled';

/** Why a webhook was disabled, as the API and the console say it. */
export const DISABLED_REASONS = {
  gone: 'The receiver answered 410 Gone.',
  failing: (since: string) => `Every delivery has failed since ${since}.`,
} as const;

/** How long a rotated-out secret still signs deliveries beside the new one. */
export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;

/** How much of a receiver's answer each attempt keeps. */
export const MAX_ATTEMPT_RESPONSE_BYTES = 1024;

/**
 * Text from a receiver as the database can keep it: PostgreSQL refuses U+0000
 * in text, so each is replaced by U+FFFD (as a decoder marks a bad byte).
 */
export const storableText = (text: string): string => text.replaceAll('\0', '\uFFFD');

/** How many webhooks one developer holds in each mode. */
export const MAX_WEBHOOKS = 20;
/** The shortest signing secret accepted. */
export const MIN_WEBHOOK_SECRET_LENGTH = 16;

// Caps on what a registration may carry at all, looser than the rules above
// and checked first: a URL up to this long still gets the URL rule's own
// answer (invalid_webhook_url, longer than MAX_URL_LENGTH).
export const MAX_WEBHOOK_URL_INPUT_LENGTH = 4096;
export const MAX_WEBHOOK_EVENTS_INPUT = 16;
export const MAX_EVENT_TYPE_INPUT_LENGTH = 64;
export const MAX_WEBHOOK_SECRET_LENGTH = 1024;

/**
 * A random signing secret, for callers that do not bring their own (console,
 * CLI, rotation): `whsec_` and base64 of 24 random bytes, the form Standard
 * Webhooks libraries take as it is.
 */
export const newWebhookSecret = () => `whsec_${randomBytes(24).toString('base64')}`;

const WHSEC_PREFIX = 'whsec_';
const STRICT_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * The HMAC key of the Standard Webhooks signature: a `whsec_` secret's
 * base64-decoded bytes (as the standard libraries decode it), else the
 * secret's UTF-8 bytes (a `whsec_` secret that is not base64 included).
 */
export function standardSigningKey(secret: string): Buffer {
  if (secret.startsWith(WHSEC_PREFIX)) {
    const encoded = secret.slice(WHSEC_PREFIX.length);
    if (encoded.length > 0 && STRICT_BASE64.test(encoded)) return Buffer.from(encoded, 'base64');
  }
  return Buffer.from(secret, 'utf8');
}

/** `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`: one entry of `webhook-signature`. */
export const standardSignature = (key: Buffer, id: string, timestamp: number, body: string): string =>
  `v1,${hmacSha256(key, `${id}.${timestamp}.${body}`, 'base64')}`;
