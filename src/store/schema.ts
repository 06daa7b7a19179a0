import type { EventType } from '../domain/events.js';
import type { Mode } from '../domain/keys.js';
import type { PauseStatus } from '../domain/pause.js';

// Row types of every table, as Kysely sees them. Times are ISO 8601 UTC text
// (fixed width, so they order and compare the same in SQLite and PostgreSQL);
// booleans are 0/1 integers and JSON is text, for the same reason.

export interface DevelopersTable {
  id: string;
  email: string;
  password_hash: string;
  plan: string;
  created_at: string;
  payment_customer_id: string | null;
  plan_status: string | null;
  plan_event_created: number | null;
}

export interface ApiKeysTable {
  id: string;
  developer_id: string;
  mode: Mode;
  key_hash: string;
  prefix: string;
  created_at: string;
}

export interface ConsoleSessionsTable {
  id: string;
  developer_id: string;
  token_hash: string;
  created_at: string;
  last_used_at: string;
  expires_at: string;
}

/** A single-use sign-in link to the reviewers' inbox (migration 0011). */
export interface InboxLinksTable {
  id: string;
  /** Lower-cased. */
  email: string;
  token_hash: string;
  created_at: string;
  expires_at: string;
  used_at: string | null;
}

/** A reviewer's inbox session: the reviewer is their email address. */
export interface InboxSessionsTable {
  id: string;
  email: string;
  token_hash: string;
  created_at: string;
  last_used_at: string;
  expires_at: string;
}

export interface SessionsTable {
  id: string;
  developer_id: string;
  token_hash: string;
  expires_at: string;
  created_at: string;
}

export interface UsageCountersTable {
  developer_id: string;
  period_start: string;
  live_pauses: number;
}

export interface PausesTable {
  id: string;
  developer_id: string;
  mode: Mode;
  status: PauseStatus;
  title: string;
  body: string | null;
  /** JSON array of strings. */
  options: string;
  allow_text: number;
  expires_at: string;
  timeout_default: string | null;
  /** JSON object. */
  metadata: string;
  /** JSON {email?, slack_webhook_url?} or null. */
  notify: string | null;
  response_choice: string | null;
  response_text: string | null;
  response_at: string | null;
  created_at: string;
  updated_at: string;
  /** A form's JSON Schema, its proposed values (JSON object) and the options that submit it (JSON array); all null without a form. */
  form_schema: string | null;
  form_values: string | null;
  form_on: string | null;
  /** JSON array of the options that need a written reason; null when none do. */
  require_text: string | null;
  /** JSON object {option: "primary" | "danger"}; null when no option is marked. */
  options_style: string | null;
  /** The answer's values (JSON object); null unless the choice submits a form. */
  response_values: string | null;
  /** Once answered, on a pause with a form: 1 when response_values differ from the proposed values, else 0; null without a form. */
  response_edited: number | null;
  /** Votes an option needs to decide; null on a pause without reviewers. */
  quorum: number | null;
  /** JSON array of the options a single vote decides; null without reviewers. */
  veto: string | null;
  remind_every: number | null;
  remind_max: number | null;
  /** JSON {after, reviewers: [{email, name}]} or null. */
  escalate: string | null;
  /** The reviewer whose vote decided the pause. */
  responded_by: string | null;
  /** Who answered from a channel's Slack buttons (JSON `{slack_user_id, email, name}`); null otherwise. */
  responded_by_slack?: string | null;
  /** How reviewers are sent the question (JSON array of channels); null: email. */
  deliver?: string | null;
  /** When the next reminder falls due; null when none is left or the pause is decided. */
  remind_at: string | null;
  reminders_sent: number | null;
  /** When the escalation falls due; null once escalated or decided. */
  escalate_at: string | null;
  escalated_at: string | null;
}

export type ReviewerSource = 'create' | 'escalation';

export interface ReviewersTable {
  id: string;
  pause_id: string;
  /** The reviewer's place in the pause's list: those named at creation, then those added by escalation. */
  position: number;
  /** Lower-cased. */
  email: string;
  name: string | null;
  added_by: ReviewerSource;
  added_at: string;
  /** The vote: all three null until the reviewer votes, then never changed. */
  vote_choice: string | null;
  vote_text: string | null;
  voted_at: string | null;
  /** The vote's values (JSON object), when its choice submits the pause's form. */
  vote_values: string | null;
}

export interface EventsTable {
  id: string;
  pause_id: string;
  developer_id: string;
  mode: Mode;
  type: EventType;
  /** The exact JSON body delivered to webhooks. */
  payload: string;
  created_at: string;
}

export interface IdempotencyKeysTable {
  developer_id: string;
  mode: Mode;
  key: string;
  request_hash: string;
  response_status: number;
  response_body: string;
  created_at: string;
}

export interface WebhooksTable {
  id: string;
  developer_id: string;
  mode: Mode;
  url: string;
  /** JSON array of event types. */
  events: string;
  /** The signing secret, sealed with the at-rest key. */
  secret_sealed: string;
  created_at: string;
  /** The secret before the last rotation, sealed; still signs until previous_secret_expires_at (migration 0016). */
  previous_secret_sealed: string | null;
  previous_secret_expires_at: string | null;
  /** Set while the webhook is disabled (no deliveries), with why. */
  disabled_at: string | null;
  disabled_reason: string | null;
  /** When it was last enabled again. */
  enabled_at: string | null;
  /**
   * When its failing streak began: its first failed attempt after its last
   * success, adding or enabling; null while not failing (migration 0018).
   */
  failing_since: string | null;
}

/** One attempt at a delivery, kept for WEBHOOK_ATTEMPT_RETENTION (migration 0016). */
export interface DeliveryAttemptsTable {
  id: string;
  delivery_id: string;
  webhook_id: string;
  at: string;
  duration_ms: number;
  status_code: number | null;
  /** The first MAX_ATTEMPT_RESPONSE_BYTES of the response. */
  response_body: string | null;
  error: string | null;
}

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

/** The work-queue columns shared by deliveries and notifications (see outbox.ts). */
export interface OutboxColumns<Status extends string> {
  status: Status;
  attempts: number;
  /** When the next attempt is due (or the current claim's lease ends); null once done. */
  next_attempt_at: string | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: string;
  updated_at: string;
  completed_at: string | null;
}

export interface DeliveriesTable extends OutboxColumns<DeliveryStatus> {
  id: string;
  webhook_id: string;
  event_id: string;
  developer_id: string;
}

export interface BillingEventsTable {
  id: string;
  type: string;
  created: number;
  developer_id: string | null;
  outcome: string;
  received_at: string;
}

export interface PlanChangesTable {
  id: string;
  developer_id: string;
  from_plan: string;
  to_plan: string;
  status: string | null;
  event_id: string;
  event_type: string;
  created_at: string;
}

export type NotificationStatus = 'pending' | 'sent' | 'failed' | 'suppressed';

export interface NotificationsTable extends OutboxColumns<NotificationStatus> {
  id: string;
  /** The pause it is about; null for an email about the account (a webhook disabled), migration 0016. */
  pause_id: string | null;
  developer_id: string;
  channel: 'email' | 'slack';
  /** Shown to the developer: the address, or the Slack URL with its secret part masked. */
  recipient: string;
  /** The Slack webhook URL (a credential), sealed; null for email. */
  target_sealed: string | null;
  subject: string | null;
  text_body: string;
  html_body: string | null;
  /** The reviewer it is for; null for a `notify` recipient. */
  reviewer_id: string | null;
  kind: NotificationKind;
  /** Slack app messages: where the message was posted and its timestamp, once it was (chat.update needs both). */
  slack_channel?: string | null;
  slack_ts?: string | null;
  /** A reviewer's direct message: the Slack user it was posted to (only they answer with its buttons). */
  slack_user_id?: string | null;
  /** An `update`: the notification whose message it updates. */
  updates_id?: string | null;
}

/** Why a notification was sent: the question itself, a reminder, an escalation, an update of a Slack message, or a webhook disabled. */
export type NotificationKind = 'question' | 'reminder' | 'escalation' | 'update' | 'webhook_disabled';

export interface Database {
  developers: DevelopersTable;
  api_keys: ApiKeysTable;
  sessions: SessionsTable;
  console_sessions: ConsoleSessionsTable;
  inbox_links: InboxLinksTable;
  inbox_sessions: InboxSessionsTable;
  usage_counters: UsageCountersTable;
  pauses: PausesTable;
  reviewers: ReviewersTable;
  events: EventsTable;
  idempotency_keys: IdempotencyKeysTable;
  webhooks: WebhooksTable;
  deliveries: DeliveriesTable;
  delivery_attempts: DeliveryAttemptsTable;
  billing_events: BillingEventsTable;
  plan_changes: PlanChangesTable;
  notifications: NotificationsTable;
}
