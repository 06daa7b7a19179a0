import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('developers')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('email', 'text', (c) => c.notNull().unique())
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('plan', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();

  // One active key per developer and mode; rotation replaces it in place.
  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('developer_id', 'text', (c) => c.notNull().references('developers.id').onDelete('cascade'))
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('prefix', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('api_keys_developer_mode', ['developer_id', 'mode'])
    .execute();

  await db.schema
    .createTable('sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('developer_id', 'text', (c) => c.notNull().references('developers.id').onDelete('cascade'))
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('sessions_expires_at').on('sessions').column('expires_at').execute();

  // Live pauses created per developer and billing period (calendar month, UTC).
  await db.schema
    .createTable('usage_counters')
    .addColumn('developer_id', 'text', (c) => c.notNull().references('developers.id').onDelete('cascade'))
    .addColumn('period_start', 'text', (c) => c.notNull())
    .addColumn('live_pauses', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('usage_counters_pk', ['developer_id', 'period_start'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('usage_counters').execute();
  await db.schema.dropTable('sessions').execute();
  await db.schema.dropTable('api_keys').execute();
  await db.schema.dropTable('developers').execute();
}
