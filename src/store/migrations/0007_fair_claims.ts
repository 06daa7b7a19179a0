import { type Kysely, sql } from 'kysely';

// The fair claim (src/store/outbox.ts) walks the developers with pending work
// and takes each one's oldest due rows: both are probes of this index, so a
// claim costs the batch, not the backlog.

const TABLES = ['deliveries', 'notifications'] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const table of TABLES) {
    await db.schema
      .createIndex(`${table}_due_by_developer`)
      .on(table)
      .columns(['developer_id', 'next_attempt_at'])
      .where(sql.ref('status'), '=', 'pending')
      .execute();
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of TABLES) await db.schema.dropIndex(`${table}_due_by_developer`).execute();
}
