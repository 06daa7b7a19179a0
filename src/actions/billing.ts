import type { ServiceContext } from '../context.js';
import { type BillingIntent, interpret, type ProviderEvent } from '../domain/billing.js';
import { isoTime } from '../domain/clock.js';
import { applyBillingEvent, type BillingOutcome } from '../store/billing.js';

// The payment provider's events (POST /v1/billing/webhook), once their
// signature and shape are checked: what each means for a plan, applied once.

/** Applies a verified provider event: a plan change (only to a plan PLAN_QUOTAS knows), once per event id. */
export async function applyPaymentEvent(
  services: Pick<ServiceContext, 'store' | 'clock' | 'config' | 'logger'>,
  event: ProviderEvent,
): Promise<BillingOutcome> {
  const { store, clock, config, logger } = services;
  let intent: BillingIntent = interpret(event);
  if (intent.kind !== 'ignore' && intent.plan !== null && !config.planQuotas.has(intent.plan)) {
    intent = { kind: 'ignore', reason: `plan "${intent.plan}" is not in PLAN_QUOTAS` };
  }
  const outcome = await applyBillingEvent(store, event, intent, isoTime(clock.now()));
  const fields = { provider_event_id: event.id, type: event.type, result: outcome.result };
  if (outcome.result === 'ignored') logger.info({ ...fields, reason: outcome.reason }, 'billing event ignored');
  else
    logger.info(
      { ...fields, developer_id: 'developerId' in outcome ? outcome.developerId : undefined },
      'billing event',
    );
  return outcome;
}
