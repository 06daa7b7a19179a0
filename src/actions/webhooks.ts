import Type, { type Static } from 'typebox';
import type { ServiceContext } from '../context.js';
import { isoTime } from '../domain/clock.js';
import { EVENT_TYPES } from '../domain/events.js';
import { newId } from '../domain/ids.js';
import { seal } from '../domain/sealed.js';
import {
  MAX_EVENT_TYPE_INPUT_LENGTH,
  MAX_WEBHOOK_EVENTS_INPUT,
  MAX_WEBHOOK_SECRET_LENGTH,
  MAX_WEBHOOK_URL_INPUT_LENGTH,
  MAX_WEBHOOKS,
  MIN_WEBHOOK_SECRET_LENGTH,
  newWebhookSecret,
  ROTATION_OVERLAP_MS,
  type Webhook,
} from '../domain/webhooks.js';
import { ApiError, invalidField, notFound } from '../errors.js';
import { checkWebhookUrl } from '../net/address-policy.js';
import {
  type DeliveryOfPause,
  type DeliveryOfWebhook,
  getDelivery,
  listDeliveries,
  listPauseDeliveries,
  recoverDeliveries,
} from '../store/deliveries.js';
import { type DeliveryAttempt, listAttempts } from '../store/delivery-attempts.js';
import { isUniqueViolation } from '../store/errors.js';
import type { Owner } from '../store/pauses.js';
import type { DeliveryStatus } from '../store/schema.js';
import {
  deleteWebhook,
  enableWebhook,
  getOwnedWebhook,
  insertWebhookUnderCap,
  isOwnedWebhook,
  listWebhooks,
  rotateWebhookSecret,
} from '../store/webhooks.js';
import { requeueAndWake } from './requeue.js';
import { Timestamp } from './schema-types.js';

// A developer's webhooks and their deliveries, for the API (/v1/webhooks…)
// and the console alike: registering one (its rules and cap), listing,
// removing, a webhook's delivery log, a pause's deliveries, and sending a
// failed delivery again.

/** A webhook as its owner sees it: never its secret. */
export type OwnedWebhook = Webhook;

/**
 * A webhook as a caller may register it: types and outer bounds only. The
 * rules themselves are checked in registerWebhook, so each failure gets its
 * own code (invalid_webhook_url, invalid_events, invalid_secret).
 */
export const RegisterWebhookInput = Type.Object(
  {
    url: Type.String({
      maxLength: MAX_WEBHOOK_URL_INPUT_LENGTH,
      description:
        'https:// and public; private addresses are refused, except networks in WEBHOOK_ALLOWED_NETWORKS. localhost stands for 127.0.0.1 and ::1 (never looked up) and is admitted when the allowlist admits either.',
    }),
    events: Type.Array(Type.String({ maxLength: MAX_EVENT_TYPE_INPUT_LENGTH }), { maxItems: MAX_WEBHOOK_EVENTS_INPUT }),
    secret: Type.String({
      maxLength: MAX_WEBHOOK_SECRET_LENGTH,
      description: `At least ${MIN_WEBHOOK_SECRET_LENGTH} characters; signs every delivery.`,
    }),
  },
  {
    additionalProperties: false,
    examples: [
      {
        url: 'https://hooks.example.com/pausepoint',
        events: ['pause.responded', 'pause.timed_out', 'pause.cancelled'],
        secret: 'whsec_6f1d0c9b2a7e4f58b3c1d2e9',
      },
    ],
  },
);

export type WebhookRegistration = Static<typeof RegisterWebhookInput>;

/**
 * Registers a webhook for the owner after checking the events, the secret,
 * the URL (https and public, unless WEBHOOK_ALLOWED_NETWORKS says otherwise)
 * and the cap; an ApiError says which rule failed. `options.id` (a form's,
 * made when it was shown) makes a form sent twice add one webhook: the second
 * time is refused.
 */
export async function registerWebhook(
  services: Pick<ServiceContext, 'store' | 'clock' | 'config' | 'keys'>,
  owner: Owner,
  registration: WebhookRegistration,
  options: { id?: string } = {},
): Promise<OwnedWebhook> {
  const { store, clock, config, keys } = services;
  const { url, events, secret } = registration;
  if (events.length === 0 || new Set(events).size !== events.length) {
    throw new ApiError('invalid_events', 'events must list one or more event types, each once.');
  }
  const unknown = events.filter((event) => !(EVENT_TYPES as readonly string[]).includes(event));
  if (unknown.length > 0) {
    throw new ApiError('invalid_events', `Unknown event types: ${unknown.join(', ')}. Use ${EVENT_TYPES.join(', ')}.`);
  }
  if (secret.length < MIN_WEBHOOK_SECRET_LENGTH) {
    throw new ApiError(
      'invalid_secret',
      `secret must be at least ${MIN_WEBHOOK_SECRET_LENGTH} characters of random data.`,
    );
  }
  const checked = await checkWebhookUrl(url, { allowedNetworks: config.webhookAllowedNetworks });
  if (!checked.ok) throw new ApiError('invalid_webhook_url', checked.reason);

  const webhook: OwnedWebhook = {
    id: options.id ?? newId('wh'),
    mode: owner.mode,
    url: checked.url.toString(),
    events,
    createdAt: isoTime(clock.now()),
    status: 'active',
    disabledReason: null,
  };
  const stored = { ...webhook, developerId: owner.developerId, secretSealed: seal(keys.atRest, secret) };
  let added: boolean;
  try {
    added = await insertWebhookUnderCap(store, stored, MAX_WEBHOOKS);
  } catch (error) {
    if (options.id === undefined || !isUniqueViolation(error)) throw error;
    throw new ApiError('invalid_request', 'This form was sent already: the webhook was added then.');
  }
  if (!added) {
    throw new ApiError('invalid_request', `A ${owner.mode} account has at most ${MAX_WEBHOOKS} webhooks.`);
  }
  return webhook;
}

/** The owner's webhooks in its mode, newest first. */
export const listOwnedWebhooks = (services: Pick<ServiceContext, 'store'>, owner: Owner): Promise<OwnedWebhook[]> =>
  listWebhooks(services.store, owner);

/** The owner's webhook (404 if it is not theirs, or of the other mode). */
export async function readOwnedWebhook(
  services: Pick<ServiceContext, 'store'>,
  owner: Owner,
  webhookId: string,
): Promise<OwnedWebhook> {
  const webhook = await getOwnedWebhook(services.store, owner, webhookId);
  if (!webhook) throw notFound('Webhook');
  return webhook;
}

/** Removes the owner's webhook and its deliveries (404 if it is not theirs). */
export async function removeOwnedWebhook(
  services: Pick<ServiceContext, 'store'>,
  owner: Owner,
  webhookId: string,
): Promise<void> {
  if (!(await deleteWebhook(services.store, owner, webhookId))) throw notFound('Webhook');
}

async function requireWebhook(services: Pick<ServiceContext, 'store'>, owner: Owner, webhookId: string) {
  if (!(await isOwnedWebhook(services.store, owner, webhookId))) throw notFound('Webhook');
}

export interface DeliveryListRequest {
  /** Page size, 1–100 (checked by the caller). */
  limit: number;
  /** A delivery id: the page after it. */
  startingAfter?: string | undefined;
  status?: DeliveryStatus | undefined;
}

/** A page of the owner's webhook's deliveries, newest first (404 if the webhook is not theirs). */
export async function listWebhookDeliveries(
  services: Pick<ServiceContext, 'store'>,
  owner: Owner,
  webhookId: string,
  request: DeliveryListRequest,
): Promise<{ rows: DeliveryOfWebhook[]; hasMore: boolean }> {
  await requireWebhook(services, owner, webhookId);
  return listDeliveries(services.store, { webhookId, ...request });
}

/**
 * Queues a failed delivery again (same body, same signature, attempts from
 * zero) and wakes the workers; 404 if the webhook or delivery is not the
 * owner's, 409 when the delivery has not failed or the webhook is disabled. The answer is the delivery as
 * re-queued (`pending`), not read again: a worker woken by the commit may
 * already have sent it, which the deliveries list shows.
 */
export async function redeliver(
  services: Pick<ServiceContext, 'store' | 'clock'>,
  owner: Owner,
  webhookId: string,
  deliveryId: string,
): Promise<DeliveryOfWebhook> {
  const webhook = await readOwnedWebhook(services, owner, webhookId);
  const existing = await getDelivery(services.store, { webhookId, deliveryId });
  if (!existing) throw notFound('Delivery');
  if (webhook.status === 'disabled') {
    throw new ApiError('webhook_disabled', 'This webhook is disabled: enable it, then retry the delivery.');
  }
  const requeued = await requeueAndWake(services, 'deliveries', deliveryId);
  if (!requeued) {
    throw new ApiError('delivery_not_failed', `Only a failed delivery can be retried; this one is ${existing.status}.`);
  }
  // As re-queued, not read again: a woken worker may already have delivered it.
  return { ...existing, ...requeued };
}

/** The deliveries of the owner's pause's events, oldest first (none for another owner's pause). */
export const listOwnedPauseDeliveries = (
  services: Pick<ServiceContext, 'store'>,
  owner: Owner,
  pauseId: string,
): Promise<DeliveryOfPause[]> => listPauseDeliveries(services.store, owner, pauseId);

/** A delivery with every attempt kept of it, oldest first. */
export type DeliveryWithAttempts = DeliveryOfWebhook & { attemptLog: DeliveryAttempt[] };

/** The owner's webhook's delivery with its attempts (404 if the webhook or the delivery is not theirs). */
export async function readWebhookDelivery(
  services: Pick<ServiceContext, 'store'>,
  owner: Owner,
  webhookId: string,
  deliveryId: string,
): Promise<DeliveryWithAttempts> {
  await requireWebhook(services, owner, webhookId);
  const delivery = await getDelivery(services.store, { webhookId, deliveryId });
  if (!delivery) throw notFound('Delivery');
  return { ...delivery, attemptLog: await listAttempts(services.store, deliveryId) };
}

/**
 * Gives the owner's webhook a new random secret, answered once. The old one
 * still signs deliveries, beside the new one, for ROTATION_OVERLAP_MS (24 h);
 * rotating again drops it, so at most two secrets are ever valid.
 */
export async function rotateOwnedWebhookSecret(
  services: Pick<ServiceContext, 'store' | 'clock' | 'keys'>,
  owner: Owner,
  webhookId: string,
): Promise<{ webhook: OwnedWebhook; secret: string; previousSecretExpiresAt: string }> {
  const { store, clock, keys } = services;
  const secret = newWebhookSecret();
  const previousSecretExpiresAt = isoTime(new Date(clock.now().getTime() + ROTATION_OVERLAP_MS));
  const rotated = await rotateWebhookSecret(store, owner, {
    webhookId,
    secretSealed: seal(keys.atRest, secret),
    previousExpiresAt: previousSecretExpiresAt,
  });
  if (!rotated) throw notFound('Webhook');
  return { webhook: await readOwnedWebhook(services, owner, webhookId), secret, previousSecretExpiresAt };
}

/** Turns the owner's webhook back on (a no-op for an active one); 404 if it is not theirs. */
export async function enableOwnedWebhook(
  services: Pick<ServiceContext, 'store' | 'clock'>,
  owner: Owner,
  webhookId: string,
): Promise<OwnedWebhook> {
  if (!(await enableWebhook(services.store, owner, webhookId, isoTime(services.clock.now())))) {
    throw notFound('Webhook');
  }
  return readOwnedWebhook(services, owner, webhookId);
}

export const RecoverInput = Type.Object(
  {
    since: { ...Timestamp, description: 'ISO 8601: the start of the window (its events made at or after it).' },
    until: Type.Optional({
      ...Timestamp,
      description: 'ISO 8601: the end of the window (before it); now when left out.',
    }),
  },
  { additionalProperties: false, examples: [{ since: '2026-11-20T00:00:00Z' }] },
);
export type Recovery = Static<typeof RecoverInput>;

/**
 * Recovers a window of the owner's webhook's deliveries: re-queues those that
 * failed and delivers the events it missed while disabled, once each however
 * often it is called. 404 if the webhook is not the owner's; 409
 * `webhook_disabled` while it is disabled (enable it first); a window whose
 * `since` is after its `until` is refused naming `until`, a `since` in the
 * future without `until` naming `since`.
 */
export async function recoverOwnedWebhook(
  services: Pick<ServiceContext, 'store' | 'clock'>,
  owner: Owner,
  webhookId: string,
  recovery: Recovery,
): Promise<{ requeued: number; added: number }> {
  const { store, clock } = services;
  const now = clock.now();
  const since = Date.parse(recovery.since);
  if (Number.isNaN(since)) throw invalidField('since', 'must be an ISO 8601 time');
  // Without until, the window ends now: a since after it is since's fault.
  if (recovery.until === undefined && since > now.getTime()) throw invalidField('since', 'must not be in the future');
  const until = recovery.until === undefined ? now.getTime() : Date.parse(recovery.until);
  if (Number.isNaN(until)) throw invalidField('until', 'must be an ISO 8601 time');
  if (since > until) throw invalidField('until', 'must not be before since');
  const webhook = await readOwnedWebhook(services, owner, webhookId);
  if (webhook.status === 'disabled') {
    throw new ApiError('webhook_disabled', 'This webhook is disabled: enable it, then recover what it missed.');
  }
  return recoverDeliveries(store, {
    webhookId,
    since: isoTime(new Date(since)),
    // Events of this very moment included.
    until: isoTime(new Date(until + (recovery.until === undefined ? 1 : 0))),
    now: isoTime(now),
  });
}
