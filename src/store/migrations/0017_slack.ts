import type { Kysely } from 'kysely';

// The Slack app (DESIGN.md "Slack"): a message posted through it is known by
// its channel and timestamp, kept on its notification so that the pause's
// outcome can update it later; an update is itself a notification that names
// the one it updates. A pause answered from a channel's buttons keeps the
// Slack user who answered (JSON), and a pause with reviewers how they are
// sent the question (JSON, e.g. ["slack"]; null is email), so that reminders
// and escalation go the same way. All null on every row made before.

const NOTIFICATION_COLUMNS = ['slack_channel', 'slack_ts', 'updates_id'] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const column of NOTIFICATION_COLUMNS)
    await db.schema.alterTable('notifications').addColumn(column, 'text').execute();
  await db.schema.alterTable('pauses').addColumn('responded_by_slack', 'text').execute();
  await db.schema.alterTable('pauses').addColumn('deliver', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('pauses').dropColumn('deliver').execute();
  await db.schema.alterTable('pauses').dropColumn('responded_by_slack').execute();
  for (const column of [...NOTIFICATION_COLUMNS].reverse())
    await db.schema.alterTable('notifications').dropColumn(column).execute();
}
