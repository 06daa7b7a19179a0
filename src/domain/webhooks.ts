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

/** A random signing secret, for callers that do not bring their own (console, CLI). */
export const newWebhookSecret = () => `whsec_${randomBytes(24).toString('hex')}`;
