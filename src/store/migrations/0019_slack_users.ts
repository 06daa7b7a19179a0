import type { Kysely } from 'kysely';

// A reviewer's Slack direct message keeps the Slack user it was posted to,
// so that only that user's click answers with the reviewer's token (an email
// alone is not trusted). Null on every row made before, and on channel posts.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('notifications').addColumn('slack_user_id', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('notifications').dropColumn('slack_user_id').execute();
}
