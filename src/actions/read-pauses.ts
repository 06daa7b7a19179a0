import type { ServiceContext } from '../context.js';
import { isoTime } from '../domain/clock.js';
import { currentOutcome, type PauseStatus } from '../domain/pause.js';
import { searchRuleBroken, searchWords } from '../domain/search.js';
import { ApiError, notFound } from '../errors.js';
import { searchPauses } from '../store/pause-search.js';
import { countPendingPauses, getOwnedPause, listPauses, type Owner } from '../store/pauses.js';
import { longPollWithinCap } from './long-poll.js';
import { type PresentedPause, presentStoredPauses } from './present-pause.js';

// Reading a developer's pauses, for the API (GET /v1/pause…) and the MCP
// tools alike: one pause, with an optional wait for its outcome, or a page of
// them, newest first.

type ReadServices = Pick<ServiceContext, 'store' | 'clock' | 'waiters' | 'keys' | 'publicBaseUrl' | 'config'>;

/**
 * The owner's pause (404 if it is not theirs, or of the other mode). With
 * `waitSeconds`, waits up to that long for it to leave pending; the wait ends
 * early, with the pause as it stands, when the service closes or `signal`
 * aborts. A `waiter` (an API key) holds at most MAX_WAITS_PER_KEY waits at
 * once on this instance: over that, the pause is read once and answered at
 * once, pending or not, as a wait that ended early.
 */
export async function readOwnedPause(
  services: ReadServices,
  owner: Owner,
  pauseId: string,
  options: { waitSeconds?: number; signal?: AbortSignal | undefined; waiter?: string } = {},
): Promise<PresentedPause> {
  const { store, waiters } = services;
  const row = await longPollWithinCap(
    { slots: waiters, holder: options.waiter, max: services.config.maxWaitsPerKey },
    {
      waitSeconds: options.waitSeconds ?? 0,
      read: async () => {
        const pause = await getOwnedPause(store, owner, pauseId);
        if (!pause) throw notFound('Pause');
        return pause;
      },
      isDone: (row) => currentOutcome(row).status !== 'pending',
      // Every transition wakes its pause's waiters once it commits, the expirer's timeouts included.
      wake: (row, ms, signal) => waiters.waitForPause(row.id, ms, signal),
      isClosed: () => waiters.isClosed,
      signal: options.signal,
    },
  );
  const [presented] = await presentStoredPauses(services, [row]);
  return presented as PresentedPause;
}

export interface PauseListRequest {
  status?: PauseStatus | undefined;
  /** Page size, 1–100 (checked by the caller). */
  limit: number;
  /** A pause id: the page after it. */
  startingAfter?: string | undefined;
}

/** A page of the owner's pauses, newest first, as the API shows them. */
export async function listOwnedPauses(
  services: ReadServices,
  owner: Owner,
  request: PauseListRequest,
): Promise<{ data: PresentedPause[]; hasMore: boolean }> {
  const { rows, hasMore } = await listPauses(services.store, owner, {
    status: request.status,
    limit: request.limit,
    startingAfter: request.startingAfter,
    now: isoTime(services.clock.now()),
  });
  return { data: await presentStoredPauses(services, rows), hasMore };
}

export interface PauseSearchRequest {
  /** What was typed: its words must each start a word of the title. */
  text: string;
  status?: PauseStatus | undefined;
  limit: number;
  /** The `next` of the previous page. */
  cursor?: string | undefined;
}

/**
 * A page of the owner's pauses whose titles have the words searched for,
 * newest first, through the text index. Text without a word finds nothing.
 * Words that break a search rule (domain/search.ts) are refused with a 400,
 * a search while SEARCH_CONCURRENCY others run on this instance with a 429,
 * and one that runs out of SEARCH_TIMEOUT_MS (PostgreSQL) with a 503, each
 * naming the rule.
 */
export async function searchOwnedPauses(
  services: ReadServices & Pick<ServiceContext, 'config' | 'searchSlots'>,
  owner: Owner,
  request: PauseSearchRequest,
): Promise<{ data: PresentedPause[]; next?: string | undefined }> {
  const words = searchWords(request.text);
  if (words.length === 0) return { data: [] };
  const broken = searchRuleBroken(words);
  if (broken) throw new ApiError('invalid_request', broken.message, { rule: broken.rule });
  const slots = services.searchSlots;
  if (!slots.take()) {
    throw new ApiError(
      'rate_limited',
      `Too many searches at once: this server runs at most ${slots.size} at a time; try again in a moment.`,
      { rule: 'concurrent_searches' },
      { 'retry-after': '1' },
    );
  }
  let page: Awaited<ReturnType<typeof searchPauses>>;
  try {
    page = await searchPauses(services.store, owner, {
      words,
      status: request.status,
      limit: request.limit,
      cursor: request.cursor,
      timeoutMs: services.config.searchTimeoutMs,
    });
  } finally {
    slots.release();
  }
  return { data: await presentStoredPauses(services, page.rows), next: page.next };
}

/** How many of the owner's pauses wait for an answer (as the list's pending filter counts them). */
export const countOwnedPending = (services: Pick<ServiceContext, 'store'>, owner: Owner): Promise<number> =>
  countPendingPauses(services.store, owner);
