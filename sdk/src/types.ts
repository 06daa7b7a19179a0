// The SDK's public types. Every shape the API sends or accepts is taken from
// the generated OpenAPI types (./generated/openapi.ts), so a change to the
// service's schema that the SDK does not follow fails to compile.
import type { paths } from './generated/openapi.js';

type JsonOf<T> = T extends { content: { 'application/json': infer Body } } ? Body : never;
type QueryOf<T> = T extends { parameters: { query?: infer Query } } ? NonNullable<Query> : never;

/** A pause: a question a human must answer before a program goes on. */
export type Pause = JsonOf<paths['/v1/pause/{id}']['get']['responses'][200]>;
/** `pending`, then exactly one of `responded`, `timed_out` or `cancelled`. */
export type PauseStatus = Pause['status'];
/** The human's answer, or for a timeout the default (`choice` null when there was none). */
export type PauseResponse = NonNullable<Pause['response']>;
/** Free-form developer data, echoed in webhook events and never shown to the human. */
export type Metadata = Pause['metadata'];

/** The body of `POST /v1/pause`. */
export type CreatePauseParams = JsonOf<paths['/v1/pause']['post']['requestBody']>;
/** `status`, `limit` (page size) and `starting_after` for `GET /v1/pause`. */
export type ListPausesParams = QueryOf<paths['/v1/pause']['get']>;

/** A registered webhook (its secret is never returned). */
export type Webhook = JsonOf<paths['/v1/webhooks']['post']['responses'][201]>;
/** The body of `POST /v1/webhooks`. */
export type CreateWebhookParams = JsonOf<paths['/v1/webhooks']['post']['requestBody']>;
/** The answer to `DELETE /v1/webhooks/{webhook_id}`. */
export type DeletedWebhook = JsonOf<paths['/v1/webhooks/{webhook_id}']['delete']['responses'][200]>;
/** One delivery of one event to one webhook, with its attempts so far. */
export type Delivery = JsonOf<paths['/v1/webhooks/{webhook_id}/deliveries']['get']['responses'][200]>['data'][number];
/** The answer to a delivery's retry: the delivery, queued again. */
export type RetriedDelivery = JsonOf<
  paths['/v1/webhooks/{webhook_id}/deliveries/{delivery_id}/retry']['post']['responses'][200]
>;
/** `limit` (page size) and `starting_after` for a webhook's deliveries. */
export type ListDeliveriesParams = QueryOf<paths['/v1/webhooks/{webhook_id}/deliveries']['get']>;

/** One event of `GET /v1/events`; `payload` is the exact webhook body. */
export type Event = JsonOf<paths['/v1/events']['get']['responses'][200]>;
export type EventRecord = Event['data'][number];
/** `since`, `limit` and `wait` (seconds, ≤ 60) for `GET /v1/events`. */
export type ListEventsParams = QueryOf<paths['/v1/events']['get']>;

/** The error body every failing API call answers with. */
export type ApiErrorBody = JsonOf<paths['/v1/pause/{id}']['get']['responses'][404]>;

/** A list page of the API. */
export interface ListPage<T> {
  object: 'list';
  data: T[];
  has_more: boolean;
}

/** The three event types, as sent in `X-Service-Event` and the envelope's `event`. */
export type WebhookEventType = 'pause.responded' | 'pause.timed_out' | 'pause.cancelled';
export const WEBHOOK_EVENT_TYPES: readonly WebhookEventType[] = [
  'pause.responded',
  'pause.timed_out',
  'pause.cancelled',
];

interface Envelope<Type extends WebhookEventType, Data> {
  event: Type;
  pause_id: Pause['id'];
  developer_id: string;
  /** ISO 8601 UTC. */
  timestamp: string;
  data: Data;
}

/** A human answered. */
export type PauseRespondedEvent = Envelope<
  'pause.responded',
  {
    choice: NonNullable<PauseResponse['choice']>;
    text: PauseResponse['text'];
    response_at: PauseResponse['response_at'];
    metadata: Metadata;
  }
>;

/** Nobody answered in time; `choice` is the pause's `timeout_default`, or null. */
export type PauseTimedOutEvent = Envelope<
  'pause.timed_out',
  { choice: PauseResponse['choice']; response_at: PauseResponse['response_at']; metadata: Metadata }
>;

/** The developer cancelled the pause. */
export type PauseCancelledEvent = Envelope<'pause.cancelled', { metadata: Metadata }>;

/** The body of a webhook delivery. Switch on `event` to narrow `data`. */
export type WebhookEvent = PauseRespondedEvent | PauseTimedOutEvent | PauseCancelledEvent;

/** How a pause ended: what `ask()` returns. */
export interface Outcome {
  status: Exclude<PauseStatus, 'pending'>;
  /** The option chosen; on a timeout the default, or null; null when cancelled. */
  choice: PauseResponse['choice'];
  /** The human's free text, or null. */
  text: PauseResponse['text'];
  /** When the answer came, or the pause expired; null when cancelled. */
  response_at: PauseResponse['response_at'] | null;
  /** The pause as it ended. */
  pause: Pause;
}
