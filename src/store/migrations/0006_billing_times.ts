import { type Kysely, PostgresAdapter } from 'kysely';

// The provider's `created` times are unix seconds; PostgreSQL's `integer` is
// 32-bit and would fail for events after 2038-01-19. SQLite's integers are
// already 64-bit, so only PostgreSQL changes.

const isPostgres = (db: Kysely<unknown>) => db.getExecutor().adapter instanceof PostgresAdapter;

export async function up(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) return;
  await db.schema
    .alterTable('developers')
    .alterColumn('plan_event_created', (c) => c.setDataType('bigint'))
    .execute();
  await db.schema
    .alterTable('billing_events')
    .alterColumn('created', (c) => c.setDataType('bigint'))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) return;
  await db.schema
    .alterTable('billing_events')
    .alterColumn('created', (c) => c.setDataType('integer'))
    .execute();
  await db.schema
    .alterTable('developers')
    .alterColumn('plan_event_created', (c) => c.setDataType('integer'))
    .execute();
}
