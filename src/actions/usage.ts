import type { ServiceContext } from '../context.js';
import { quotaOf } from '../domain/plans.js';
import { getPlan, listPlanChanges } from '../store/billing.js';
import type { PlanChangesTable } from '../store/schema.js';
import { readUsage, type Usage } from '../store/usage.js';

// A developer's plan, this month's quota and the plan's history, for
// GET /v1/auth/me, GET /v1/billing and the console's usage page alike.

type UsageServices = Pick<ServiceContext, 'store' | 'config' | 'clock'>;

/** How many live pauses the developer on `plan` has made this calendar month (UTC), and may. */
export const usageThisMonth = (services: UsageServices, developer: { id: string; plan: string }): Promise<Usage> =>
  readUsage(services.store, {
    developerId: developer.id,
    quota: quotaOf(services.config.planQuotas, developer.plan),
    now: services.clock.now(),
  });

export interface PlanOverview {
  plan: string;
  /** The provider's subscription status, if any. */
  status: string | null;
  usage: Usage;
  /** The latest plan changes, newest first. */
  changes: PlanChangesTable[];
}

/** The plan GET /v1/billing answers with: the same numbers the console shows. */
export const PLAN_HISTORY_LENGTH = 20;

export async function planOverview(services: UsageServices, developerId: string): Promise<PlanOverview> {
  const developer = await getPlan(services.store, developerId);
  const [usage, changes] = await Promise.all([
    usageThisMonth(services, { id: developerId, plan: developer.plan }),
    listPlanChanges(services.store, { developerId, limit: PLAN_HISTORY_LENGTH }),
  ]);
  return { plan: developer.plan, status: developer.plan_status, usage, changes };
}
