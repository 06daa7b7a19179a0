import type { Kysely } from 'kysely';

// A webhook's failing streak kept on the webhook (docs/webhooks.md#disabled-webhooks):
// failing_since is the time of the first failed attempt after its last
// success (or its adding or enabling), null while its last attempt succeeded.
// Set by the settle of a failed attempt when null, cleared by the settle of a
// successful one, reset by enabling; read with the delivery, so the check
// after a failed attempt no longer walks the attempts back to the last
// success, and the streak no longer depends on WEBHOOK_ATTEMPT_RETENTION. The
// index that walk used goes. Null on every webhook at first: a streak under
// way counts from its next failure.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('webhooks').addColumn('failing_since', 'text').execute();
  await db.schema.dropIndex('delivery_attempts_by_webhook').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('delivery_attempts_by_webhook')
    .on('delivery_attempts')
    .columns(['webhook_id', 'at'])
    .execute();
  await db.schema.alterTable('webhooks').dropColumn('failing_since').execute();
}
