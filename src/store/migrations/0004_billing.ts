import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('developers').addColumn('payment_customer_id', 'text').execute();
  await db.schema.alterTable('developers').addColumn('plan_status', 'text').execute();
  // The provider's `created` time (unix seconds) of the event that last set the
  // plan: an older event arriving late must not undo a newer one.
  await db.schema.alterTable('developers').addColumn('plan_event_created', 'integer').execute();
  await db.schema.createIndex('developers_payment_customer').on('developers').column('payment_customer_id').execute();

  // Every provider event received, once: a replay of an id changes nothing.
  await db.schema
    .createTable('billing_events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('created', 'integer', (c) => c.notNull())
    .addColumn('developer_id', 'text')
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('received_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('plan_changes')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('developer_id', 'text', (c) => c.notNull().references('developers.id').onDelete('cascade'))
    .addColumn('from_plan', 'text', (c) => c.notNull())
    .addColumn('to_plan', 'text', (c) => c.notNull())
    .addColumn('status', 'text')
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('event_type', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('plan_changes_developer').on('plan_changes').columns(['developer_id', 'id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('plan_changes').execute();
  await db.schema.dropTable('billing_events').execute();
  await db.schema.dropIndex('developers_payment_customer').execute();
  await db.schema.alterTable('developers').dropColumn('plan_event_created').execute();
  await db.schema.alterTable('developers').dropColumn('plan_status').execute();
  await db.schema.alterTable('developers').dropColumn('payment_customer_id').execute();
}
