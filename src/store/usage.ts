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
