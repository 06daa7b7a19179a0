import type { Kysely } from 'kysely';

// Webhooks, second wave (docs/webhooks.md): a rotated secret kept valid for a
// while beside the new one, a webhook disabled (by a 410, by failing for
// WEBHOOK_DISABLE_AFTER, or by hand) and enabled again, and every delivery
// attempt kept, pruned after WEBHOOK_ATTEMPT_RETENTION.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('webhooks').addColumn('previous_secret_sealed', 'text').execute();
  await db.schema.alterTable('webhooks').addColumn('previous_secret_expires_at', 'text').execute();
  await db.schema.alterTable('webhooks').addColumn('disabled_at', 'text').execute();
  await db.schema.alterTable('webhooks').addColumn('disabled_reason', 'text').execute();
  // When it was last enabled: a failing streak counts from then at the earliest.
  await db.schema.alterTable('webhooks').addColumn('enabled_at', 'text').execute();

  await db.schema
    .createTable('delivery_attempts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('delivery_id', 'text', (c) => c.notNull().references('deliveries.id').onDelete('cascade'))
    .addColumn('webhook_id', 'text', (c) => c.notNull())
    .addColumn('at', 'text', (c) => c.notNull())
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('response_body', 'text')
    .addColumn('error', 'text')
    .execute();
  await db.schema
    .createIndex('delivery_attempts_by_delivery')
    .on('delivery_attempts')
    .columns(['delivery_id', 'at'])
    .execute();
  // The failing streak of a webhook, read on failed attempts only.
  await db.schema
    .createIndex('delivery_attempts_by_webhook')
    .on('delivery_attempts')
    .columns(['webhook_id', 'at'])
    .execute();
  // Pruning by age.
  await db.schema.createIndex('delivery_attempts_by_time').on('delivery_attempts').column('at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('delivery_attempts').execute();
  for (const column of [
    'previous_secret_sealed',
    'previous_secret_expires_at',
    'disabled_at',
    'disabled_reason',
    'enabled_at',
  ]) {
    await db.schema.alterTable('webhooks').dropColumn(column).execute();
  }
}
