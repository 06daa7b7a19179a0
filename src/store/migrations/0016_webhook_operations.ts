import { type Kysely, sql } from 'kysely';
import { isSqlite } from './0012_pause_search.js';

// Webhooks, second wave (docs/webhooks.md): a rotated secret kept valid for a
// while beside the new one, a webhook disabled (by a 410, by failing for
// WEBHOOK_DISABLE_AFTER, or by hand) and enabled again, and every delivery
// attempt kept, pruned after WEBHOOK_ATTEMPT_RETENTION. A disabled webhook's
// owner is emailed through the notifications queue, so a notification no
// longer always belongs to a pause: its pause_id may be null.

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

  await setPauseIdNullable(db, true);
}

/**
 * notifications.pause_id with or without NOT NULL. PostgreSQL alters the
 * column; SQLite cannot, so the table is made again from its own CREATE
 * statement with the constraint changed, its rows copied and its indexes
 * remade (nothing references notifications, so dropping it breaks no key).
 */
async function setPauseIdNullable(db: Kysely<unknown>, nullable: boolean): Promise<void> {
  if (!isSqlite(db)) {
    await sql`alter table notifications alter column pause_id ${nullable ? sql`drop` : sql`set`} not null`.execute(db);
    return;
  }
  const { rows } = await sql<{ type: string; sql: string }>`
    select type, sql from sqlite_master where tbl_name = 'notifications' and sql is not null`.execute(db);
  const table = rows.find((row) => row.type === 'table')!.sql;
  const [from, to] = nullable
    ? ['"pause_id" text not null', '"pause_id" text']
    : ['"pause_id" text', '"pause_id" text not null'];
  const remade = table
    .replace('"notifications"', '"notifications_remade"')
    .replace(`${from} references`, `${to} references`);
  if (remade === table.replace('"notifications"', '"notifications_remade"')) {
    throw new Error(`migration 0016: cannot find ${from} in ${table}`);
  }
  await sql.raw(remade).execute(db);
  await sql`insert into notifications_remade select * from notifications`.execute(db);
  await sql`drop table notifications`.execute(db);
  await sql`alter table notifications_remade rename to notifications`.execute(db);
  for (const index of rows.filter((row) => row.type === 'index')) await sql.raw(index.sql).execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`delete from notifications where pause_id is null`.execute(db);
  await setPauseIdNullable(db, false);
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
