import type { Kysely } from 'kysely';
import type { Pause } from '../domain/pause.js';
import { type Claim, claimDue } from './outbox.js';
import type { Database, NotificationsTable } from './schema.js';
import type { Store } from './store.js';
import { announceWorkQueued } from './wake-ups.js';

// Human notifications of a pause: written with it, sent by the outbox worker.

/** The columns every new notification starts with: queued when live, kept as `suppressed` in test mode. */
export function queuedColumns(pause: Pick<Pause, 'id' | 'developerId' | 'mode'>, now: string) {
  const queued = pause.mode === 'live';
  return {
    pause_id: pause.id,
    developer_id: pause.developerId,
    status: queued ? ('pending' as const) : ('suppressed' as const),
    attempts: 0,
    next_attempt_at: queued ? now : null,
    last_status_code: null,
    last_error: null,
    created_at: now,
    updated_at: now,
    completed_at: null,
  };
}

/** The notifications of a new pause, in the transaction that creates it. */
export async function insertNotifications(
  store: Store,
  rows: NotificationsTable[],
  trx: Kysely<Database> = store.db,
): Promise<void> {
  if (rows.length === 0) return;
  await trx.insertInto('notifications').values(rows).execute();
  // Pending ones wait for the senders: wake them (of every instance) once this commits.
  if (rows.some((row) => row.status === 'pending')) await announceWorkQueued(store, trx);
}

/** One notification of a pause, with its rendered content. */
export const getNotification = (
  store: Store,
  input: { pauseId: string; notificationId: string },
  trx: Kysely<Database> = store.db,
): Promise<NotificationsTable | undefined> =>
  trx
    .selectFrom('notifications')
    .selectAll()
    .where('id', '=', input.notificationId)
    .where('pause_id', '=', input.pauseId)
    .executeTakeFirst();

/** The rendered content of a pause's suppressed notifications (a test pause's: never sent). */
export const suppressedContentOf = (
  store: Store,
  pauseId: string,
  trx: Kysely<Database> = store.db,
): Promise<Array<Pick<NotificationsTable, 'id' | 'subject' | 'recipient' | 'text_body'>>> =>
  trx
    .selectFrom('notifications')
    .select(['id', 'subject', 'recipient', 'text_body'])
    .where('pause_id', '=', pauseId)
    .where('status', '=', 'suppressed')
    .orderBy('id')
    .execute();

export type NotificationSummary = Pick<
  NotificationsTable,
  | 'id'
  | 'pause_id'
  | 'channel'
  | 'recipient'
  | 'status'
  | 'attempts'
  | 'last_error'
  | 'completed_at'
  | 'created_at'
  | 'reviewer_id'
  | 'kind'
>;

/**
 * The notifications of these pauses, grouped by pause. Only a pause created
 * with `notify` or reviewers has any, so the others cost no query.
 */
export async function notificationsOf(
  store: Store,
  pauses: Array<Pick<Pause, 'id' | 'notify' | 'quorum'>>,
  trx: Kysely<Database> = store.db,
): Promise<Map<string, NotificationSummary[]>> {
  const byPause = new Map<string, NotificationSummary[]>();
  const pauseIds = pauses.filter((pause) => pause.notify !== null || pause.quorum !== null).map((pause) => pause.id);
  if (pauseIds.length === 0) return byPause;
  const rows = await trx
    .selectFrom('notifications')
    .select([
      'id',
      'pause_id',
      'channel',
      'recipient',
      'status',
      'attempts',
      'last_error',
      'completed_at',
      'created_at',
      'reviewer_id',
      'kind',
    ])
    .where('pause_id', 'in', pauseIds)
    .orderBy('id')
    .execute();
  for (const row of rows) {
    // Found by pause_id: never null here.
    const pauseId = row.pause_id as string;
    byPause.set(pauseId, [...(byPause.get(pauseId) ?? []), row]);
  }
  return byPause;
}

export type NotificationToSend = Claim &
  Pick<
    NotificationsTable,
    | 'channel'
    | 'recipient'
    | 'target_sealed'
    | 'subject'
    | 'text_body'
    | 'html_body'
    | 'pause_id'
    | 'reviewer_id'
    | 'kind'
    | 'updates_id'
  >;

/** A Slack app message as a notification keeps it: its fallback text and Block Kit blocks. */
export interface StoredSlackMessage {
  text: string;
  blocks: object[];
}

/** The message a Slack app notification posts (kept as JSON in text_body). */
export const slackMessageOf = (notification: Pick<NotificationsTable, 'text_body'>): StoredSlackMessage =>
  JSON.parse(notification.text_body) as StoredSlackMessage;

/** Claims up to `limit` due notifications (claimDue) and loads them. */
export async function claimNotifications(
  store: Store,
  input: { now: string; leaseUntil: string; limit: number },
): Promise<NotificationToSend[]> {
  return loadNotifications(store, await claimDue(store, 'notifications', input));
}

export async function loadNotifications(
  store: Store,
  claims: Claim[],
  trx: Kysely<Database> = store.db,
): Promise<NotificationToSend[]> {
  if (claims.length === 0) return [];
  const rows = await trx
    .selectFrom('notifications')
    .select([
      'id',
      'pause_id',
      'channel',
      'recipient',
      'target_sealed',
      'subject',
      'text_body',
      'html_body',
      'reviewer_id',
      'kind',
      'updates_id',
    ])
    .where(
      'id',
      'in',
      claims.map((claim) => claim.id),
    )
    .execute();
  const attempts = new Map(claims.map((claim) => [claim.id, claim.attempts]));
  return rows.map((row) => ({ ...row, attempts: attempts.get(row.id) ?? 1 }));
}
