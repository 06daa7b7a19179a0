import type { Kysely } from 'kysely';
import { newId } from '../domain/ids.js';
import type { Database, DeliveryAttemptsTable } from './schema.js';
import type { Store } from './store.js';

// Every attempt at a webhook delivery (docs/webhooks.md#attempts): written with
// the attempt's settle, in the same transaction, as is its webhook's failing
// streak; read for a delivery's page; pruned after WEBHOOK_ATTEMPT_RETENTION.

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
 * What the attempts do to their webhooks' failing streaks (webhooks.failing_since),
 * written with their settle: a failed attempt starts its webhook's streak
 * unless one is under way; successful ones end theirs. Touches only rows whose
 * streak changes, so a success while none is under way writes nothing.
 * Undefined when there is nothing to do.
 */
export function streakUpdate(db: Kysely<Database>, attempts: NewDeliveryAttempt[], failed: boolean) {
  const webhookIds = [...new Set(attempts.map((attempt) => attempt.webhook_id))];
  const first = attempts[0];
  if (first === undefined) return undefined;
  if (failed) {
    return db
      .updateTable('webhooks')
      .set({ failing_since: first.at })
      .where('id', 'in', webhookIds)
      .where('failing_since', 'is', null);
  }
  return db
    .updateTable('webhooks')
    .set({ failing_since: null })
    .where('id', 'in', webhookIds)
    .where('failing_since', 'is not', null);
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
