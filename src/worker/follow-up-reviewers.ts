import { followUpReviewers } from '../actions/follow-up-reviewers.js';
import type { ServiceContext } from '../context.js';
import { nextFollowUp } from '../store/follow-ups.js';

// Sends reviewers' reminders and escalations as they fall due: each tick
// takes the due ones from their indexes in batches, then sleeps until the
// next falls due, never longer than MAX_SLEEP_MS, so one scheduled by another
// instance is still caught within it.

export const BATCH_SIZE = 100;
export const MAX_SLEEP_MS = 1000;
const MIN_SLEEP_MS = 20;

export function followUpReviewersTick(services: Pick<ServiceContext, 'store' | 'clock' | 'keys' | 'publicBaseUrl'>) {
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
