import Type from 'typebox';
import type { DeliveryWithAttempts, OwnedWebhook } from '../../actions/webhooks.js';
import { MAX_ID_LENGTH } from '../../domain/ids.js';
import { formatBytes } from '../../domain/units.js';
import { MAX_ATTEMPT_RESPONSE_BYTES } from '../../domain/webhooks.js';
import { ModeSchema, Timestamp } from '../../http/schemas.js';
import type { DeliveriesTable } from '../../store/schema.js';

export const WebhookObject = Type.Object({
  id: Type.String(),
  object: Type.Literal('webhook'),
  mode: ModeSchema,
  url: Type.String(),
  events: Type.Array(Type.String()),
  created_at: Timestamp,
  status: Type.Union([Type.Literal('active'), Type.Literal('disabled')], {
    description: '`disabled`: no deliveries (events are still recorded) until it is enabled again.',
  }),
  disabled_reason: Type.Union([Type.String(), Type.Null()], { description: 'Why it was disabled; null while active.' }),
});

export const DeliveryObject = Type.Object({
  id: Type.String({ description: 'Also sent as X-Service-Delivery; stable across retries.' }),
  object: Type.Literal('delivery'),
  webhook_id: Type.String(),
  event_id: Type.String(),
  event: Type.String(),
  pause_id: Type.String(),
  status: Type.Union([Type.Literal('pending'), Type.Literal('succeeded'), Type.Literal('failed')]),
  attempts: Type.Integer(),
  last_status_code: Type.Union([Type.Integer(), Type.Null()]),
  last_error: Type.Union([Type.String(), Type.Null()]),
  next_attempt_at: Type.Union([Timestamp, Type.Null()]),
  created_at: Timestamp,
  updated_at: Timestamp,
  completed_at: Type.Union([Timestamp, Type.Null()]),
});

export const WebhookIdParams = Type.Object({ webhook_id: Type.String({ maxLength: MAX_ID_LENGTH }) });

export function presentWebhook(webhook: OwnedWebhook) {
  return {
    id: webhook.id,
    object: 'webhook' as const,
    mode: webhook.mode,
    url: webhook.url,
    events: webhook.events,
    created_at: webhook.createdAt,
    status: webhook.status,
    disabled_reason: webhook.disabledReason,
  };
}

export function presentDelivery(row: DeliveriesTable & { type: string; pause_id: string }) {
  return {
    id: row.id,
    object: 'delivery' as const,
    webhook_id: row.webhook_id,
    event_id: row.event_id,
    event: row.type,
    pause_id: row.pause_id,
    status: row.status,
    attempts: Number(row.attempts),
    last_status_code: row.last_status_code,
    last_error: row.last_error,
    next_attempt_at: row.next_attempt_at,
    created_at: row.created_at,
    updated_at: row.updated_at,
    completed_at: row.completed_at,
  };
}

export const AttemptObject = Type.Object({
  at: Timestamp,
  duration_ms: Type.Integer(),
  status_code: Type.Union([Type.Integer(), Type.Null()], { description: 'null when no answer came.' }),
  response_body: Type.Union([Type.String(), Type.Null()], {
    description: `The first ${formatBytes(MAX_ATTEMPT_RESPONSE_BYTES)} of the answer's body; null when no answer came.`,
  }),
  error: Type.Union([Type.String(), Type.Null()], { description: 'Why it failed; null for a 2xx.' }),
});

/** One delivery as GET answers it: `attempts` is every attempt kept, and `attempt_count` the list's `attempts`. */
export const DeliveryWithAttemptsObject = Type.Object({
  ...DeliveryObject.properties,
  attempts: Type.Array(AttemptObject, {
    description: 'Every attempt kept (WEBHOOK_ATTEMPT_RETENTION), oldest first, across redeliveries.',
  }),
  attempt_count: Type.Integer({ description: 'Attempts in the current round (from 0 again after a redelivery).' }),
});

export function presentDeliveryWithAttempts(delivery: DeliveryWithAttempts) {
  const presented = presentDelivery(delivery);
  return {
    ...presented,
    attempt_count: presented.attempts,
    attempts: delivery.attemptLog.map((attempt) => ({
      at: attempt.at,
      duration_ms: Number(attempt.duration_ms),
      status_code: attempt.status_code === null ? null : Number(attempt.status_code),
      response_body: attempt.response_body,
      error: attempt.error,
    })),
  };
}
