// Plans and billing periods. A plan's quota is the number of live pauses a
// developer may create per calendar month (UTC); null means unlimited.

export interface BillingPeriod {
  start: string;
  end: string;
}

export function billingPeriod(now: Date): BillingPeriod {
  const start = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1);
  const end = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
  return { start: new Date(start).toISOString(), end: new Date(end).toISOString() };
}

/** The quota of a plan; a plan no longer configured falls back to free. */
export function quotaOf(planQuotas: Map<string, number | null>, plan: string): number | null {
  return planQuotas.has(plan) ? (planQuotas.get(plan) ?? null) : (planQuotas.get('free') ?? null);
}
