import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('pauses')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('developer_id', 'text', (c) => c.notNull().references('developers.id').onDelete('cascade'))
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('body', 'text')
    .addColumn('options', 'text', (c) => c.notNull())
    .addColumn('allow_text', 'integer', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('timeout_default', 'text')
    .addColumn('metadata', 'text', (c) => c.notNull())
    .addColumn('notify', 'text')
    .addColumn('response_choice', 'text')
    .addColumn('response_text', 'text')
    .addColumn('response_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  // The expirer's scan: only pending pauses, in order of expiry.
  await db.schema
    .createIndex('pauses_pending_expiry')
    .on('pauses')
    .column('expires_at')
    .where(sql.ref('status'), '=', 'pending')
    .execute();
  // Listing, newest first (ids sort by creation time), with and without a status filter.
  await db.schema.createIndex('pauses_owner').on('pauses').columns(['developer_id', 'mode', 'id']).execute();
  await db.schema
    .createIndex('pauses_owner_status')
    .on('pauses')
    .columns(['developer_id', 'mode', 'status', 'id'])
    .execute();

  // The outbox: one row per terminal transition, body stored as the exact bytes sent.
  await db.schema
    .createTable('events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('pause_id', 'text', (c) => c.notNull().references('pauses.id').onDelete('cascade'))
    .addColumn('developer_id', 'text', (c) => c.notNull())
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  // One terminal event per pause, enforced by the database as well as by the transition.
  await db.schema.createIndex('events_one_per_pause').on('events').column('pause_id').unique().execute();
  await db.schema.createIndex('events_owner').on('events').columns(['developer_id', 'mode', 'id']).execute();

  await db.schema
    .createTable('idempotency_keys')
    .addColumn('developer_id', 'text', (c) => c.notNull().references('developers.id').onDelete('cascade'))
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('request_hash', 'text', (c) => c.notNull())
    .addColumn('response_status', 'integer', (c) => c.notNull())
    .addColumn('response_body', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('idempotency_keys_pk', ['developer_id', 'mode', 'key'])
    .execute();
  await db.schema.createIndex('idempotency_keys_created').on('idempotency_keys').column('created_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('idempotency_keys').execute();
  await db.schema.dropTable('events').execute();
  await db.schema.dropTable('pauses').execute();
}
