import type { Kysely } from 'kysely';
import type { ServiceContext } from '../context.js';
import { isoTime } from '../domain/clock.js';
import { getDeveloper } from '../store/accounts.js';
import {
  type DueFollowUp,
  dueFollowUps,
  type FollowUp,
  nextFollowUp,
  takeEscalation,
  takeReminder,
} from '../store/follow-ups.js';
import { insertNotifications } from '../store/notifications.js';
import { insertReviewers } from '../store/reviewers.js';
import type { Database } from '../store/schema.js';
import { planReviewerEmails } from './plan-notifications.js';
import { newReviewer } from './plan-reviewers.js';

// Reminders to reviewers who have not voted, and escalation to more
// reviewers, as they fall due. Each is taken and its emails written in one
// transaction (the emails then go out through the outbox, with its retries).
// The worker runs followUpReviewersTick: it takes the due ones from their
// indexes in batches, then sleeps until the next falls due, never longer than
// MAX_SLEEP_MS, so one scheduled by another instance is still caught within it.
// When they fall due is decided at creation (plan-reviewers.ts); their store
// part is src/store/follow-ups.ts.

export const BATCH_SIZE = 100;
export const MAX_SLEEP_MS = 1000;
const MIN_SLEEP_MS = 20;

export type FollowUpServices = Pick<ServiceContext, 'store' | 'clock' | 'keys' | 'publicBaseUrl'>;

export function followUpReviewersTick(services: FollowUpServices) {
  const { store, clock } = services;
  return async (): Promise<number> => {
    while ((await followUpReviewers(services, BATCH_SIZE)) >= BATCH_SIZE) {
      // a full batch of either kind: more may be due
    }
    const next = await nextFollowUp(store);
    if (next === null) return MAX_SLEEP_MS;
    return Math.min(MAX_SLEEP_MS, Math.max(MIN_SLEEP_MS, Date.parse(next) - clock.now().getTime()));
  };
}

/** Sends up to `limit` due follow-ups of each kind; returns how many were due. */
export async function followUpReviewers(services: FollowUpServices, limit: number): Promise<number> {
  const { store, clock } = services;
  let due = 0;
  // The order does not matter: a reminder due at the time of an escalation
  // goes to the reviewers asked before, not to those it adds (takeReminder).
  for (const kind of ['escalate', 'remind'] as FollowUp[]) {
    const now = isoTime(clock.now());
    const pauses = await dueFollowUps(store, kind, { now, limit });
    due += pauses.length;
    for (const { id, dueAt } of pauses) {
      const input = { pauseId: id, dueAt, clock };
      await (kind === 'remind' ? remind(services, input) : escalate(services, input));
    }
  }
  return due;
}

/** Who asks, as the emails name them: the email of the pause's developer account. */
const askerOf = async (store: FollowUpServices['store'], pause: { developerId: string }, trx: Kysely<Database>) =>
  (await getDeveloper(store, pause.developerId, trx))?.email ?? '';

/** One due reminder: the reviewers who have not voted are emailed again. */
function remind(services: FollowUpServices, input: DueFollowUp): Promise<void> {
  const { store } = services;
  return store.write(async (trx) => {
    const taken = await takeReminder(store, input, trx);
    if (!taken || taken.waitingFor.length === 0) return;
    const emails = planReviewerEmails(services, taken.pause, taken.waitingFor, {
      kind: 'reminder',
      reviewerCount: taken.reviewerCount,
      now: taken.now,
      askedBy: await askerOf(store, taken.pause, trx),
      deliver: taken.pause.deliver ?? undefined,
    });
    await insertNotifications(store, emails, trx);
  });
}

/** One due escalation: its reviewers are added, each emailed their own link. */
function escalate(services: FollowUpServices, input: DueFollowUp): Promise<void> {
  const { store } = services;
  return store.write(async (trx) => {
    const taken = await takeEscalation(store, input, trx);
    if (!taken) return;
    const { pause, now, reviewerEmails } = taken;
    const already = new Set(reviewerEmails);
    const added = (pause.escalation?.reviewers ?? [])
      .filter((reviewer) => !already.has(reviewer.email))
      .map((reviewer, index) => newReviewer(pause.id, reviewer, reviewerEmails.length + index, 'escalation', now));
    if (added.length === 0) return;
    await insertReviewers(store, added, trx);
    const emails = planReviewerEmails(services, pause, added, {
      kind: 'escalation',
      reviewerCount: reviewerEmails.length + added.length,
      now,
      askedBy: await askerOf(store, pause, trx),
      deliver: pause.deliver ?? undefined,
    });
    await insertNotifications(store, emails, trx);
  });
}
