import type { ServiceContext } from '../context.js';
import type { StoredEvent } from '../domain/events.js';
import type { Mode } from '../domain/keys.js';
import { listEvents } from '../store/events.js';
import { longPollWithinCap, RECHECK_MS } from './long-poll.js';

// GET /v1/events: a developer's events in one mode, oldest first, long-polled.

/**
 * The owner's events from `since`, up to `limit`; with `waitSeconds`, waits
 * for the first one (holding one of the key's wait slots, as a pause's
 * long-poll does), until `signal` aborts.
 */
export function readEvents(
  services: Pick<ServiceContext, 'store' | 'waiters' | 'config'>,
  holder: { developerId: string; mode: Mode; credentialHash: string },
  input: { since?: string | undefined; limit: number; waitSeconds: number; signal?: AbortSignal },
): Promise<{ rows: StoredEvent[]; hasMore: boolean }> {
  const { store, waiters } = services;
  return longPollWithinCap(
    { slots: waiters, holder: holder.credentialHash, max: services.config.maxWaitsPerKey },
    {
      waitSeconds: input.waitSeconds,
      read: () => listEvents(store, holder, { since: input.since, limit: input.limit }),
      isDone: (page) => page.rows.length > 0,
      // Any change may be an event of this account; re-read at least every RECHECK_MS.
      wake: (_page, ms, signal) => waiters.waitAny(Math.min(ms, RECHECK_MS), signal),
      isClosed: () => waiters.isClosed,
      signal: input.signal,
    },
  );
}
