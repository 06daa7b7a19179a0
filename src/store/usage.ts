import type { Kysely } from 'kysely';
import { billingPeriod } from '../domain/plans.js';
import type { Database } from './schema.js';

export interface Usage {
  period_start: string;
  period_end: string;
  live_pauses_used: number;
  live_pauses_quota: number | null;
}

export async function readUsage(
  db: Kysely<Database>,
  input: { developerId: string; quota: number | null; now: Date },
): Promise<Usage> {
  const period = billingPeriod(input.now);
  const row = await db
    .selectFrom('usage_counters')
    .select('live_pauses')
    .where('developer_id', '=', input.developerId)
    .where('period_start', '=', period.start)
    .executeTakeFirst();
  return {
    period_start: period.start,
    period_end: period.end,
    live_pauses_used: Number(row?.live_pauses ?? 0),
    live_pauses_quota: input.quota,
  };
}

/**
 * Counts one live pause against the quota, inside the creating transaction.
 * The conditional increment is the whole race-safety: concurrent creates
 * queue on the counter row and only those under the quota succeed.
 */
export async function consumeLivePause(
  trx: Kysely<Database>,
  input: { developerId: string; quota: number | null; now: Date },
): Promise<boolean> {
  const period = billingPeriod(input.now);
  await trx
    .insertInto('usage_counters')
    .values({ developer_id: input.developerId, period_start: period.start, live_pauses: 0 })
    .onConflict((oc) => oc.columns(['developer_id', 'period_start']).doNothing())
    .execute();
  let increment = trx
    .updateTable('usage_counters')
    .set((eb) => ({ live_pauses: eb('live_pauses', '+', 1) }))
    .where('developer_id', '=', input.developerId)
    .where('period_start', '=', period.start);
  if (input.quota !== null) increment = increment.where('live_pauses', '<', input.quota);
  const result = await increment.executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}
