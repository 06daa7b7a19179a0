import { randomBytes } from 'node:crypto';
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
}

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

/** A random signing secret, for callers that do not bring their own (console, CLI). */
export const newWebhookSecret = () => `whsec_${randomBytes(24).toString('hex')}`;
