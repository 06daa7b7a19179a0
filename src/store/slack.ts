import type { Kysely } from 'kysely';
import { newIds } from '../domain/ids.js';
import { queuedColumns } from './notifications.js';
import type { Database, NotificationsTable } from './schema.js';
import type { Store } from './store.js';
import { announceWorkQueued } from './wake-ups.js';

// The Slack app's messages: a question posted through the app (a
// notification on channel `slack` with no webhook URL) keeps where it was
// posted, and when its pause closes each such message gets an `update`
// notification, sent by the outbox like any other (chat.update).

/** The Slack app's messages are the `slack` notifications without a webhook URL. */
const appMessages = (db: Kysely<Database>, pauseIds: readonly string[]) =>
  db
    .selectFrom('notifications')
    .where('pause_id', 'in', pauseIds)
    .where('channel', '=', 'slack')
    .where('target_sealed', 'is', null)
    .where('kind', '!=', 'update')
    // A test pause's messages were never posted: there is nothing to update.
    .where('status', '!=', 'suppressed');

/**
 * Queues an update of every Slack app message about these pauses, in the
 * transaction that closes them.
 */
export async function queueSlackUpdates(
  store: Store,
  pauseIds: readonly string[],
  now: string,
  trx: Kysely<Database>,
): Promise<void> {
  if (pauseIds.length === 0) return;
  const messages = await appMessages(trx, pauseIds)
    .select(['id', 'pause_id', 'developer_id', 'recipient', 'reviewer_id'])
    .execute();
  if (messages.length === 0) return;
  const ids = newIds('ntf', messages.length);
  const rows: NotificationsTable[] = messages.map((message, index) => {
    return {
      // Found by pause_id: never null here.
      ...queuedColumns({ id: message.pause_id as string, developerId: message.developer_id, mode: 'live' }, now),
      id: ids[index] as string,
      channel: 'slack',
      recipient: message.recipient,
      target_sealed: null,
      subject: null,
      text_body: '',
      html_body: null,
      reviewer_id: message.reviewer_id,
      kind: 'update',
      updates_id: message.id,
    };
  });
  await trx.insertInto('notifications').values(rows).execute();
  await announceWorkQueued(store, trx);
}

/**
 * The Slack user a reviewer's direct message goes to, recorded before it is
 * posted: a click on its buttons may come back before the service has heard
 * Slack's answer to the post (reviewersMessagedInSlack reads it).
 */
export const recordSlackRecipient = async (store: Store, input: { id: string; userId: string }): Promise<void> => {
  await store.db.updateTable('notifications').set({ slack_user_id: input.userId }).where('id', '=', input.id).execute();
};

/** Where a Slack app message went, once posted: what its update needs (its recipient was recorded before). */
export const recordSlackMessage = async (
  store: Store,
  input: { id: string; channel: string; ts: string },
  trx: Kysely<Database> = store.db,
): Promise<void> => {
  await trx
    .updateTable('notifications')
    .set({ slack_channel: input.channel, slack_ts: input.ts })
    .where('id', '=', input.id)
    .execute();
};

/** The message an update is about: where it was posted (null until it was) and its state. */
export const updatedMessage = (
  store: Store,
  id: string,
): Promise<Pick<NotificationsTable, 'status' | 'slack_channel' | 'slack_ts'> | undefined> =>
  store.db
    .selectFrom('notifications')
    .select(['status', 'slack_channel', 'slack_ts'])
    .where('id', '=', id)
    .executeTakeFirst();

/** The reviewers of a pause whose Slack direct messages were posted to this Slack user. */
export async function reviewersMessagedInSlack(store: Store, pauseId: string, slackUserId: string): Promise<string[]> {
  const rows = await store.db
    .selectFrom('notifications')
    .select('reviewer_id')
    .distinct()
    .where('pause_id', '=', pauseId)
    .where('channel', '=', 'slack')
    .where('slack_user_id', '=', slackUserId)
    .where('reviewer_id', 'is not', null)
    .execute();
  return rows.map((row) => row.reviewer_id as string);
}
