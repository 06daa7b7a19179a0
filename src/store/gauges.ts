import type { Kysely } from 'kysely';
import { PENDING } from './literals.js';
import type { OutboxTable } from './outbox.js';
import type { Database } from './schema.js';
import type { Store } from './store.js';

// What the metrics' gauges read at scrape time: counts over the shared
// database, so every instance reports the same state.

/** How many pauses there are of each status. */
export async function countPausesByStatus(
  store: Store,
  trx: Kysely<Database> = store.db,
): Promise<Array<{ status: string; count: number }>> {
  const rows = await trx
    .selectFrom('pauses')
    .select(['status', (eb) => eb.fn.countAll().as('count')])
    .groupBy('status')
    .execute();
  return rows.map((row) => ({ status: row.status, count: Number(row.count) }));
}

/** How many rows of an outbox queue wait to be sent. */
export async function countPendingInQueue(
  store: Store,
  table: OutboxTable,
  trx: Kysely<Database> = store.db,
): Promise<number> {
  const row = await trx
    .selectFrom(table)
    .select((eb) => eb.fn.countAll().as('count'))
    .where('status', '=', PENDING)
    .executeTakeFirst();
  return Number(row?.count ?? 0);
}

/** The due time of the oldest row of an outbox queue that is due at `now`, if any. */
export async function oldestDueInQueue(
  store: Store,
  input: { table: OutboxTable; now: string },
  trx: Kysely<Database> = store.db,
): Promise<string | null> {
  const row = await trx
    .selectFrom(input.table)
    .select((eb) => eb.fn.min('next_attempt_at').as('oldest'))
    .where('status', '=', PENDING)
    .where('next_attempt_at', '<=', input.now)
    .executeTakeFirst();
  return (row?.oldest as string | null | undefined) ?? null;
}

/** How many pending pauses are past their expires_at at `now` and not yet timed out. */
export async function countOverduePauses(store: Store, now: string, trx: Kysely<Database> = store.db): Promise<number> {
  const row = await trx
    .selectFrom('pauses')
    .select((eb) => eb.fn.countAll().as('count'))
    .where('status', '=', PENDING)
    .where('expires_at', '<=', now)
    .executeTakeFirst();
  return Number(row?.count ?? 0);
}
