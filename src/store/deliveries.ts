import type { Kysely, Transaction } from 'kysely';
import { newId } from '../domain/ids.js';
import type { Database, DeliveriesTable, EventsTable } from './schema.js';
import type { Store } from './store.js';

// Webhook deliveries: written with their event (fan-out), claimed by workers,
// settled after each attempt. The database is the queue.

const INSERT_SLICE = 1000;

/** Writes one pending delivery per subscribed webhook of each event's owner and mode. */
export async function fanOut(trx: Transaction<Database>, events: EventsTable[]): Promise<number> {
  if (events.length === 0) return 0;
  const developers = [...new Set(events.map((event) => event.developer_id))];
  const webhooks = await trx
    .selectFrom('webhooks')
    .select(['id', 'developer_id', 'mode', 'events'])
    .where('developer_id', 'in', developers)
    .execute();
  const rows: DeliveriesTable[] = [];
  for (const event of events) {
    for (const webhook of webhooks) {
      if (webhook.developer_id !== event.developer_id || webhook.mode !== event.mode) continue;
      if (!(JSON.parse(webhook.events) as string[]).includes(event.type)) continue;
      rows.push({
        id: newId('dlv'),
        webhook_id: webhook.id,
        event_id: event.id,
        developer_id: event.developer_id,
        status: 'pending',
        attempts: 0,
        next_attempt_at: event.created_at,
        last_status_code: null,
        last_error: null,
        created_at: event.created_at,
        updated_at: event.created_at,
        completed_at: null,
      });
    }
  }
  // In slices, to stay under SQLite's limit on bound parameters per statement.
  for (let i = 0; i < rows.length; i += INSERT_SLICE) {
    await trx
      .insertInto('deliveries')
      .values(rows.slice(i, i + INSERT_SLICE))
      .execute();
  }
  return rows.length;
}

export interface ClaimedDelivery {
  id: string;
  webhook_id: string;
  attempts: number;
  url: string;
  secret_sealed: string;
  type: string;
  payload: string;
}

/**
 * Claims up to `limit` due deliveries: counts the attempt and moves
 * next_attempt_at to the end of the lease. On PostgreSQL rows another worker
 * is claiming are skipped, so any number of instances share the queue.
 */
export async function claimDueDeliveries(
  store: Store,
  input: { now: string; leaseUntil: string; limit: number },
): Promise<ClaimedDelivery[]> {
  return store.db.transaction().execute(async (trx) => {
    let due = trx
      .selectFrom('deliveries')
      .select('id')
      .where('status', '=', 'pending')
      .where('next_attempt_at', '<=', input.now)
      .orderBy('next_attempt_at')
      .limit(input.limit);
    if (store.dialect === 'postgres') due = due.forUpdate().skipLocked();
    const claimed = await trx
      .updateTable('deliveries')
      .set((eb) => ({ attempts: eb('attempts', '+', 1), next_attempt_at: input.leaseUntil, updated_at: input.now }))
      .where('id', 'in', due)
      .returning(['id', 'attempts'])
      .execute();
    if (claimed.length === 0) return [];
    const details = await trx
      .selectFrom('deliveries')
      .innerJoin('webhooks', 'webhooks.id', 'deliveries.webhook_id')
      .innerJoin('events', 'events.id', 'deliveries.event_id')
      .select([
        'deliveries.id',
        'deliveries.webhook_id',
        'webhooks.url',
        'webhooks.secret_sealed',
        'events.type',
        'events.payload',
      ])
      .where(
        'deliveries.id',
        'in',
        claimed.map((row) => row.id),
      )
      .execute();
    const attempts = new Map(claimed.map((row) => [row.id, Number(row.attempts)]));
    return details.map((row) => ({ ...row, attempts: attempts.get(row.id) ?? 1 }));
  });
}

export type AttemptOutcome =
  | { kind: 'succeeded'; statusCode: number }
  | { kind: 'retry'; statusCode: number | null; error: string; nextAttemptAt: string }
  | { kind: 'failed'; statusCode: number | null; error: string };

/**
 * Records an attempt's outcome, only if the claim is still ours (same attempt
 * count, still pending): a claim whose lease ran out may have been taken over.
 */
export async function settleDelivery(
  db: Kysely<Database>,
  delivery: { id: string; attempts: number },
  outcome: AttemptOutcome,
  now: string,
): Promise<boolean> {
  const base = {
    updated_at: now,
    last_status_code: outcome.statusCode,
    last_error: outcome.kind === 'succeeded' ? null : outcome.error,
  };
  const values =
    outcome.kind === 'retry'
      ? { ...base, next_attempt_at: outcome.nextAttemptAt }
      : { ...base, status: outcome.kind, next_attempt_at: null, completed_at: now };
  const result = await db
    .updateTable('deliveries')
    .set(values)
    .where('id', '=', delivery.id)
    .where('attempts', '=', delivery.attempts)
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** When the next pending delivery falls due, if any. */
export async function nextDeliveryDue(db: Kysely<Database>): Promise<string | null> {
  const row = await db
    .selectFrom('deliveries')
    .select((eb) => eb.fn.min('next_attempt_at').as('next'))
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return (row?.next as string | null | undefined) ?? null;
}

/** Puts a failed delivery back in the queue for a fresh round of attempts. */
export async function requeueFailedDelivery(db: Kysely<Database>, id: string, now: string): Promise<boolean> {
  const result = await db
    .updateTable('deliveries')
    .set({ status: 'pending', attempts: 0, next_attempt_at: now, completed_at: null, updated_at: now })
    .where('id', '=', id)
    .where('status', '=', 'failed')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}
