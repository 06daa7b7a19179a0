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
/** A person named to decide the pause, with their personal link and their vote (null until they vote). */
export type Reviewer = Pause['reviewers'][number];
/** A reviewer's vote as the pause lists it under `reviewers[].vote`. */
export type ReviewerVote = NonNullable<Reviewer['vote']>;
/** Who decided the pause: the reviewer whose vote did, or the Slack user who answered a channel's buttons. */
export type RespondedBy = NonNullable<PauseResponse['responded_by']>;
/** A named reviewer, as an event names them. */
export type ReviewerRef = Extract<RespondedBy, { id: string }>;
/** The Slack user who answered a pause posted to a channel (docs/slack.md). */
export type SlackResponder = Extract<RespondedBy, { slack_user_id: string }>;
/** One vote counted in `response.votes`. */
export type Vote = PauseResponse['votes'][number];
/** The escalation of a pause: who is added after how long, and when it happened. */
export type Escalation = NonNullable<Pause['escalate']>;

/** The body of `POST /v1/pause`. */
export type CreatePauseParams = JsonOf<paths['/v1/pause']['post']['requestBody']>;
/** `status`, `limit` (page size) and `starting_after` for `GET /v1/pause`. */
export type ListPausesParams = QueryOf<paths['/v1/pause']['get']>;
/** A reviewer as `create` takes them: `{ email, name? }`. */
export type ReviewerParams = NonNullable<CreatePauseParams['reviewers']>[number];

/** `GET /v1/pause/{id}/timeline`: who did what to a pause and when, oldest first. */
export type Timeline = JsonOf<paths['/v1/pause/{id}/timeline']['get']['responses'][200]>;
/** One entry of a pause's timeline: `{ at, type, actor, detail }`. */
export type TimelineEntry = Timeline['data'][number];
/** `created`, `notified`, `notification_failed`, `reminded`, `escalated`, `voted`, `responded`, `timed_out`, `cancelled`. */
export type TimelineEntryType = TimelineEntry['type'];

/** The answer to a notification's retry: the notification, queued again. */
export type RetriedNotification = JsonOf<
  paths['/v1/pause/{id}/notifications/{notification_id}/retry']['post']['responses'][200]
>;

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
/** One delivery with every attempt kept of it (`attempts`, oldest first). */
export type DeliveryWithAttempts = JsonOf<
  paths['/v1/webhooks/{webhook_id}/deliveries/{delivery_id}']['get']['responses'][200]
>;
/** One attempt at a delivery: when, how long, the status code, the start of the answer, the error. */
export type DeliveryAttempt = DeliveryWithAttempts['attempts'][number];
/** The answer to a secret's rotation: the webhook, its new secret (shown once) and until when the old one signs too. */
export type RotatedWebhookSecret = JsonOf<paths['/v1/webhooks/{webhook_id}/rotate-secret']['post']['responses'][200]>;
/** The body of `POST /v1/webhooks/{webhook_id}/recover`: `since`, and `until` (now when left out). */
export type RecoverWebhookParams = JsonOf<paths['/v1/webhooks/{webhook_id}/recover']['post']['requestBody']>;
/** How many failed deliveries were queued again and how many missed events were added. */
export type WebhookRecovery = JsonOf<paths['/v1/webhooks/{webhook_id}/recover']['post']['responses'][200]>;
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

/** The event types, as sent in `X-Service-Event` and the envelope's `event`. */
export type WebhookEventType = 'pause.responded' | 'pause.timed_out' | 'pause.cancelled' | 'pause.voted';
export const WEBHOOK_EVENT_TYPES: readonly WebhookEventType[] = [
  'pause.responded',
  'pause.timed_out',
  'pause.cancelled',
  'pause.voted',
];
/**
 * The events that end a pause, one per pause. A webhook receives `pause.voted`
 * only when it subscribes to it by name; these three are the usual subscription.
 */
export const OUTCOME_EVENT_TYPES: readonly WebhookEventType[] = [
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

/**
 * A human answered. On a pause with reviewers, `responded_by` is the reviewer
 * whose vote decided it and `votes` every vote counted; both are absent on a
 * pause without reviewers, except that `responded_by` is the Slack user when
 * the answer came from a channel's Slack buttons.
 */
export type PauseRespondedEvent = Envelope<
  'pause.responded',
  {
    choice: NonNullable<PauseResponse['choice']>;
    text: PauseResponse['text'];
    response_at: PauseResponse['response_at'];
    metadata: Metadata;
    responded_by?: RespondedBy | null;
    votes?: Vote[];
  }
>;

/** Nobody answered in time; `choice` is the pause's `timeout_default`, or null. */
export type PauseTimedOutEvent = Envelope<
  'pause.timed_out',
  { choice: PauseResponse['choice']; response_at: PauseResponse['response_at']; metadata: Metadata }
>;

/** The developer cancelled the pause. */
export type PauseCancelledEvent = Envelope<'pause.cancelled', { metadata: Metadata }>;

/**
 * A reviewer voted (sent only to webhooks subscribed to `pause.voted`).
 * `votes_so_far` counts every vote on the pause, this one included.
 */
export type PauseVotedEvent = Envelope<
  'pause.voted',
  {
    reviewer: ReviewerRef;
    choice: string;
    text: string | null;
    voted_at: string;
    votes_so_far: number;
    metadata: Metadata;
  }
>;

/** The body of a webhook delivery. Switch on `event` to narrow `data`. */
export type WebhookEvent = PauseRespondedEvent | PauseTimedOutEvent | PauseCancelledEvent | PauseVotedEvent;

/**
 * How a pause ended: what `ask()` returns. `Values` is the type of a form's
 * values: the schema's output for a Standard Schema (parsed by it), the
 * generic given to `ask<Values>()` for a JSON Schema.
 */
export interface Outcome<Values = Record<string, unknown>> {
  status: Exclude<PauseStatus, 'pending'>;
  /** The option chosen; on a timeout the default, or null; null when cancelled. */
  choice: PauseResponse['choice'];
  /** The human's free text, or null. */
  text: PauseResponse['text'];
  /**
   * The form's values, for a choice that submits it (the human's, or the
   * proposed ones left as they were); null without a form, for another
   * choice, on a timeout and when cancelled.
   */
  values: Values | null;
  /** True when the human changed the proposed values. */
  edited: boolean;
  /** When the answer came, or the pause expired; null when cancelled. */
  response_at: PauseResponse['response_at'] | null;
  /** With reviewers: the one whose vote decided; otherwise (and on a timeout or cancel) null. */
  responded_by: RespondedBy | null;
  /** With reviewers: every vote cast, oldest first (also those before a timeout or cancel); otherwise empty. */
  votes: Vote[];
  /** The pause as it ended. */
  pause: Pause;
}
