import type { Kysely, Transaction } from 'kysely';
import type { BillingIntent, ProviderEvent } from '../domain/billing.js';
import { newId } from '../domain/ids.js';
import { isUniqueViolation } from './errors.js';
import type { Database, DevelopersTable, PlanChangesTable } from './schema.js';
import type { Store } from './store.js';

// A developer's plan: changed by provider events, read with its history.
//
// A verified provider event is applied once. The event id is recorded in the
// same transaction as its effect, so a replay (or a concurrent duplicate)
// changes nothing. Plans follow the provider's `created` order, not arrival
// order: an older event arriving after a newer one is recorded but not applied.

export type BillingOutcome =
  | { result: 'applied'; developerId: string; plan: string }
  | { result: 'duplicate' }
  | { result: 'ignored'; reason: string; developerId?: string };

export async function applyBillingEvent(
  store: Store,
  event: ProviderEvent,
  intent: BillingIntent,
  now: string,
): Promise<BillingOutcome> {
  try {
    return await store.transaction(async (trx) => {
      await trx
        .insertInto('billing_events')
        .values({
          id: event.id,
          type: event.type,
          created: event.created,
          developer_id: null,
          outcome: 'received',
          received_at: now,
        })
        .execute();
      const outcome = await decide(trx, event, intent, now);
      await trx
        .updateTable('billing_events')
        .set({
          developer_id: 'developerId' in outcome ? (outcome.developerId ?? null) : null,
          outcome: outcome.result === 'ignored' ? `ignored: ${outcome.reason}` : outcome.result,
        })
        .where('id', '=', event.id)
        .execute();
      return outcome;
    });
  } catch (error) {
    if (isUniqueViolation(error)) return { result: 'duplicate' };
    throw error;
  }
}

async function decide(
  trx: Transaction<Database>,
  event: ProviderEvent,
  intent: BillingIntent,
  now: string,
): Promise<BillingOutcome> {
  if (intent.kind === 'ignore') return { result: 'ignored', reason: intent.reason };

  const developer = await findDeveloper(trx, intent);
  if (!developer) return { result: 'ignored', reason: 'unknown developer or customer' };

  if (intent.customerId && developer.payment_customer_id !== intent.customerId) {
    await trx
      .updateTable('developers')
      .set({ payment_customer_id: intent.customerId })
      .where('id', '=', developer.id)
      .execute();
  }
  const plan = intent.plan;
  if (plan === null) return { result: 'ignored', reason: 'checkout names no plan', developerId: developer.id };
  const status = intent.kind === 'subscription' ? intent.status : 'active';

  const last = developer.plan_event_created === null ? null : Number(developer.plan_event_created);
  // Equal times: an end of subscription is final for that second.
  const stale =
    last !== null && (event.created < last || (event.created === last && developer.plan_status === 'canceled'));
  if (stale) return { result: 'ignored', reason: 'older than the event that set the plan', developerId: developer.id };

  await trx
    .updateTable('developers')
    .set({ plan, plan_status: status, plan_event_created: event.created })
    .where('id', '=', developer.id)
    .execute();
  if (plan !== developer.plan || status !== developer.plan_status) {
    await trx
      .insertInto('plan_changes')
      .values({
        id: newId('bill'),
        developer_id: developer.id,
        from_plan: developer.plan,
        to_plan: plan,
        status,
        event_id: event.id,
        event_type: event.type,
        created_at: now,
      })
      .execute();
  }
  return { result: 'applied', developerId: developer.id, plan };
}

async function findDeveloper(trx: Transaction<Database>, intent: Exclude<BillingIntent, { kind: 'ignore' }>) {
  const columns = ['id', 'plan', 'plan_status', 'plan_event_created', 'payment_customer_id'] as const;
  const byId = (id: string) => trx.selectFrom('developers').select(columns).where('id', '=', id).executeTakeFirst();
  let developer: Pick<DevelopersTable, (typeof columns)[number]> | undefined;
  if (intent.kind === 'subscription' && intent.customerId) {
    developer = await trx
      .selectFrom('developers')
      .select(columns)
      .where('payment_customer_id', '=', intent.customerId)
      .executeTakeFirst();
  }
  // A checkout names the developer; a subscription may too, in its metadata,
  // when it arrives before the checkout that links the customer.
  if (!developer && intent.developerId) developer = await byId(intent.developerId);
  return developer;
}

/** The developer's plan and the provider's subscription status; throws if there is no such developer. */
export const getPlan = (
  store: Store,
  developerId: string,
  trx: Kysely<Database> = store.db,
): Promise<Pick<DevelopersTable, 'plan' | 'plan_status'>> =>
  trx.selectFrom('developers').select(['plan', 'plan_status']).where('id', '=', developerId).executeTakeFirstOrThrow();

/** The developer's latest plan changes, newest first. */
export const listPlanChanges = (
  store: Store,
  input: { developerId: string; limit: number },
  trx: Kysely<Database> = store.db,
): Promise<PlanChangesTable[]> =>
  trx
    .selectFrom('plan_changes')
    .selectAll()
    .where('developer_id', '=', input.developerId)
    .orderBy('id', 'desc')
    .limit(input.limit)
    .execute();
