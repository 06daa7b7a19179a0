import type { Kysely } from 'kysely';
import type { Database } from './schema.js';
import type { Store } from './store.js';

// The work queues in the database: webhook deliveries and human notifications
// share these columns (status, attempts, next_attempt_at, last_status_code,
// last_error, updated_at, completed_at) and this code.
//
// next_attempt_at doubles as the claim lease: claiming a row counts the
// attempt and moves next_attempt_at to the end of the lease, so a worker that
// dies mid-attempt leaves a row that simply falls due again.

export type OutboxTable = 'deliveries' | 'notifications';

export interface Claim {
  id: string;
  attempts: number;
}

export type AttemptOutcome =
  | { kind: 'succeeded'; statusCode: number | null }
  | { kind: 'retry'; statusCode: number | null; error: string; nextAttemptAt: string }
  | { kind: 'failed'; statusCode: number | null; error: string };

/** The status a settled row gets: deliveries succeed, notifications are sent. */
const DONE: Record<OutboxTable, string> = { deliveries: 'succeeded', notifications: 'sent' };

// Both tables have the queue columns; Kysely is told it is looking at one of
// them, and every query names the real table.
const queue = (db: Kysely<Database>) => db as unknown as Kysely<Pick<Database, 'deliveries'>>;

/** Claims up to `limit` due rows. On PostgreSQL rows being claimed elsewhere are skipped. */
export async function claimDue(
  store: Store,
  table: OutboxTable,
  input: { now: string; leaseUntil: string; limit: number },
): Promise<Claim[]> {
  return store.db.transaction().execute(async (trx) => {
    const db = queue(trx);
    let due = db
      .selectFrom(table as 'deliveries')
      .select('id')
      .where('status', '=', 'pending')
      .where('next_attempt_at', '<=', input.now)
      .orderBy('next_attempt_at')
      .limit(input.limit);
    if (store.dialect === 'postgres') due = due.forUpdate().skipLocked();
    const claimed = await db
      .updateTable(table as 'deliveries')
      .set((eb) => ({ attempts: eb('attempts', '+', 1), next_attempt_at: input.leaseUntil, updated_at: input.now }))
      .where('id', 'in', due)
      .returning(['id', 'attempts'])
      .execute();
    return claimed.map((row) => ({ id: row.id, attempts: Number(row.attempts) }));
  });
}

/**
 * Records an attempt's outcome, only if the claim is still ours (same attempt
 * count, still pending): a claim whose lease ran out may have been taken over.
 */
export async function settle(
  db: Kysely<Database>,
  table: OutboxTable,
  claim: Claim,
  outcome: AttemptOutcome,
  now: string,
): Promise<boolean> {
  const base = {
    updated_at: now,
    last_status_code: outcome.statusCode,
    last_error: outcome.kind === 'succeeded' ? null : outcome.error,
  };
  const status = outcome.kind === 'succeeded' ? DONE[table] : outcome.kind;
  const values =
    outcome.kind === 'retry'
      ? { ...base, next_attempt_at: outcome.nextAttemptAt }
      : { ...base, status: status as 'succeeded', next_attempt_at: null, completed_at: now };
  const result = await queue(db)
    .updateTable(table as 'deliveries')
    .set(values)
    .where('id', '=', claim.id)
    .where('attempts', '=', claim.attempts)
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** When the next pending row falls due, if any. */
export async function nextDue(db: Kysely<Database>, table: OutboxTable): Promise<string | null> {
  const row = await queue(db)
    .selectFrom(table as 'deliveries')
    .select((eb) => eb.fn.min('next_attempt_at').as('next'))
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return (row?.next as string | null | undefined) ?? null;
}

/** Puts a failed row back in the queue for a fresh round of attempts. */
export async function requeueFailed(
  db: Kysely<Database>,
  table: OutboxTable,
  id: string,
  now: string,
): Promise<boolean> {
  const result = await queue(db)
    .updateTable(table as 'deliveries')
    .set({ status: 'pending', attempts: 0, next_attempt_at: now, completed_at: null, updated_at: now })
    .where('id', '=', id)
    .where('status', '=', 'failed')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}
