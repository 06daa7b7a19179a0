import type { Kysely } from 'kysely';
import { billingPeriod } from '../domain/plans.js';
import { prepared } from './prepared.js';
import type { Database } from './schema.js';
import type { Store } from './store.js';

export interface Usage {
  period_start: string;
  period_end: string;
  live_pauses_used: number;
  live_pauses_quota: number | null;
}

export async function readUsage(
  store: Store,
  input: { developerId: string; quota: number | null; now: Date },
  trx: Kysely<Database> = store.db,
): Promise<Usage> {
  const period = billingPeriod(input.now);
  const row = await trx
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

type Counter = { developerId: string; periodStart: string };

const openCounter = prepared((db, input: Counter) =>
  db
    .insertInto('usage_counters')
    .values({ developer_id: input.developerId, period_start: input.periodStart, live_pauses: 0 })
    .onConflict((oc) => oc.columns(['developer_id', 'period_start']).doNothing()),
);

const incrementCounter = (db: Kysely<Database>, input: Counter) =>
  db
    .updateTable('usage_counters')
    .set((eb) => ({ live_pauses: eb('live_pauses', '+', 1) }))
    .where('developer_id', '=', input.developerId)
    .where('period_start', '=', input.periodStart);

const countLivePause = prepared((db, input: Counter) => incrementCounter(db, input).returning('live_pauses'));

const countLivePauseUnder = prepared((db, input: Counter & { quota: number }) =>
  incrementCounter(db, input).where('live_pauses', '<', input.quota).returning('live_pauses'),
);

/**
 * Counts one live pause against the quota, inside the creating transaction.
 * The conditional increment is the whole race-safety: concurrent creates
 * queue on the counter row and only those under the quota succeed.
 */
export async function consumeLivePause(
  store: Store,
  input: { developerId: string; quota: number | null; now: Date },
  trx: Kysely<Database>,
): Promise<boolean> {
  const counter = { developerId: input.developerId, periodStart: billingPeriod(input.now).start };
  await openCounter(store, counter, trx);
  const counted =
    input.quota === null
      ? await countLivePause(store, counter, trx)
      : await countLivePauseUnder(store, { ...counter, quota: input.quota }, trx);
  return counted.length === 1;
}
