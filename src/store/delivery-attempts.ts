import type { Kysely } from 'kysely';
import { laterTime } from '../domain/clock.js';
import { newId } from '../domain/ids.js';
import type { Database, DeliveryAttemptsTable } from './schema.js';
import type { Store } from './store.js';

// Every attempt at a webhook delivery (docs/webhooks.md#attempts): written with
// the attempt's settle, in the same transaction; read for a delivery's page and
// for a webhook's failing streak; pruned after WEBHOOK_ATTEMPT_RETENTION.

export type DeliveryAttempt = Omit<DeliveryAttemptsTable, 'id' | 'delivery_id' | 'webhook_id'>;
export type NewDeliveryAttempt = Omit<DeliveryAttemptsTable, 'id'>;

/** At most this many attempts in one INSERT (SQLite's limit on bound parameters). */
const INSERT_SLICE = 100;

export async function insertAttempts(trx: Kysely<Database>, attempts: NewDeliveryAttempt[]): Promise<void> {
  for (let i = 0; i < attempts.length; i += INSERT_SLICE) {
    const slice = attempts.slice(i, i + INSERT_SLICE).map((attempt) => ({ id: newId('att'), ...attempt }));
    await trx.insertInto('delivery_attempts').values(slice).execute();
  }
}

/** A delivery's attempts, oldest first. */
export const listAttempts = (
  store: Store,
  deliveryId: string,
  trx: Kysely<Database> = store.db,
): Promise<DeliveryAttempt[]> =>
  trx
    .selectFrom('delivery_attempts')
    .select(['at', 'duration_ms', 'status_code', 'response_body', 'error'])
    .where('delivery_id', '=', deliveryId)
    .orderBy('at')
    .orderBy('id')
    .execute();

/**
 * When the webhook's current failing streak began: its first attempt after
 * both its last successful one and `since` (its creation or last enabling),
 * when nothing has succeeded since; null when it has no failed attempt since.
 */
export async function failingStreakStart(
  store: Store,
  input: { webhookId: string; since: string },
  trx: Kysely<Database> = store.db,
): Promise<string | null> {
  const lastSuccess = await trx
    .selectFrom('delivery_attempts')
    .select((eb) => eb.fn.max('at').as('at'))
    .where('webhook_id', '=', input.webhookId)
    .where('status_code', '>=', 200)
    .where('status_code', '<', 300)
    .executeTakeFirst();
  const last = lastSuccess?.at as string | null | undefined;
  const after = last ? laterTime(last, input.since) : input.since;
  const first = await trx
    .selectFrom('delivery_attempts')
    .select((eb) => eb.fn.min('at').as('at'))
    .where('webhook_id', '=', input.webhookId)
    .where('at', '>', after)
    .executeTakeFirst();
  return (first?.at as string | null | undefined) ?? null;
}

/** Deletes up to `limit` attempts made before `before`; answers how many. */
export async function pruneAttempts(
  store: Store,
  input: { before: string; limit: number },
  trx: Kysely<Database> = store.db,
): Promise<number> {
  const result = await trx
    .deleteFrom('delivery_attempts')
    .where('id', 'in', (eb) =>
      eb.selectFrom('delivery_attempts').select('id').where('at', '<', input.before).orderBy('at').limit(input.limit),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
