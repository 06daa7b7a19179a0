import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // Human notifications: one row per recipient, with the content rendered at
  // creation (kept for test mode, where nothing is sent). Same queue columns
  // as deliveries, so one outbox worker serves both.
  await db.schema
    .createTable('notifications')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('pause_id', 'text', (c) => c.notNull().references('pauses.id').onDelete('cascade'))
    .addColumn('developer_id', 'text', (c) => c.notNull())
    .addColumn('channel', 'text', (c) => c.notNull())
    .addColumn('recipient', 'text', (c) => c.notNull())
    .addColumn('target_sealed', 'text')
    .addColumn('subject', 'text')
    .addColumn('text_body', 'text', (c) => c.notNull())
    .addColumn('html_body', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('next_attempt_at', 'text')
    .addColumn('last_status_code', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('completed_at', 'text')
    .execute();
  await db.schema
    .createIndex('notifications_due')
    .on('notifications')
    .column('next_attempt_at')
    .where(sql.ref('status'), '=', 'pending')
    .execute();
  await db.schema.createIndex('notifications_pause').on('notifications').columns(['pause_id', 'id']).execute();

  // GET /v1/events reads by owner in time order.
  await db.schema
    .createIndex('events_owner_time')
    .on('events')
    .columns(['developer_id', 'mode', 'created_at'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('events_owner_time').execute();
  await db.schema.dropTable('notifications').execute();
}
