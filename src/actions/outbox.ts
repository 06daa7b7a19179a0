import type { ServiceContext } from '../context.js';
import { isoTime } from '../domain/clock.js';
import { type AttemptResult, nextAttempt } from '../domain/retry-schedule.js';
import { storableText } from '../domain/webhooks.js';
import type { PostResult } from '../net/safe-client.js';
import type { NewDeliveryAttempt } from '../store/delivery-attempts.js';
import { type Claim, nextDue, type OutboxTable, release, settle, settleSucceeded } from '../store/outbox.js';
import type { TickContext } from './ticks.js';

// One tick of an outbox queue (webhook deliveries, notifications): claim due
// rows, attempt each, settle each, until nothing more is due. What follows a
// failed attempt is domain/retry-schedule.ts.

/** While attempts are out, how often to look for newly due rows when not woken. */
const RECLAIM_MS = 100;
const CLAIM_RETRY_MS = 1000;
/** How long the rows claimed ahead should last (see rowsAhead). */
const AHEAD_MS = 100;
/**
 * A row claimed ahead that has not started in this many times what the rows
 * ahead should last (AHEAD_MS, or an attempt's time when longer) is handed
 * back: its receivers turned slow, and another developer's new row should not
 * wait behind it (see start).
 */
const AHEAD_STALE_AFTER = 5;
/** The weight of one attempt's time in their moving average: 1/ATTEMPTS_AVERAGED. */
const ATTEMPTS_AVERAGED = 32;
/**
 * Statements settling successes that may be out at once, each carrying all
 * the successes waiting when it starts; the second only while a batch waits.
 */
const SETTLES_AT_ONCE = 2;

/** An HTTP attempt's result: only a 2xx counts as done (redirects are not followed). */
export function httpAttempt(result: PostResult): AttemptResult {
  if (result.ok && result.status >= 200 && result.status < 300) {
    return { ok: true, statusCode: result.status, responseBody: result.body };
  }
  return {
    ok: false,
    statusCode: result.status ?? null,
    // An error may quote the receiver's bytes (a bad header): kept as the database can keep it.
    error: result.ok ? `HTTP ${result.status}` : storableText(result.error),
    responseBody: result.body,
  };
}

export interface OutboxSpec<T extends Claim> {
  table: OutboxTable;
  batchSize: number;
  /** Claims up to `limit` due rows (claimDue) with what their attempts need, in the order the claim chose them. */
  claim(input: { now: string; leaseUntil: string; limit: number }): Promise<T[]>;
  /**
   * At most how many batches may be claimed ahead of those attempting (1 when
   * not given; see rowsAhead). More keeps quick attempts from waiting on a
   * claim's round trips and commit; a row claimed ahead that cannot start in
   * time is handed back.
   */
  batchesAhead?: number;
  /** Makes one attempt; `at` is when it starts, by the service's clock. */
  attempt(item: T, at: Date): Promise<AttemptResult>;
  /** Called once a row has failed for good. */
  failed(item: T, error: string): void;
  /**
   * The attempt to keep, written with the attempt's settle (deliveries keep
   * every attempt made); undefined when none was made.
   */
  record?(item: T, result: AttemptResult, at: string, durationMs: number): NewDeliveryAttempt | undefined;
  /** Called after a failed attempt (retried or failed for good) has been settled. */
  afterFailure?(item: T, result: AttemptResult, now: Date): Promise<void>;
}

export function outboxTick<T extends Claim>(
  services: Pick<ServiceContext, 'store' | 'clock' | 'logger' | 'config' | 'metrics'>,
  spec: OutboxSpec<T>,
) {
  const { store, clock, logger, config, metrics } = services;
  const batchesAhead = spec.batchesAhead ?? 1;

  // Rows are claimed ahead as many as the slots would use in AHEAD_MS, by
  // how long attempts have taken lately (a moving average): at least a batch,
  // at most batchesAhead. Taken from the attempts' own time, not from the rate
  // of answers, which the rows ahead themselves bound. A row claimed ahead
  // waits behind the others already claimed, so slow receivers (a
  // developer's backlog among them) keep that queue short and another
  // developer's new row is not held up behind it.
  // While no attempt has ended for longer than that average (slow receivers
  // now, quick ones before), that time counts instead.
  let attemptMs: number | undefined;
  let lastAnswerAt = 0;
  const attemptTook = (ms: number) => {
    attemptMs = attemptMs === undefined ? ms : attemptMs + (ms - attemptMs) / ATTEMPTS_AVERAGED;
    lastAnswerAt = performance.now();
  };
  const attemptMsNow = () =>
    attemptMs === undefined ? undefined : Math.max(attemptMs, performance.now() - lastAnswerAt, 1);
  const rowsAhead = () => {
    const ms = attemptMsNow();
    if (ms === undefined) return spec.batchSize;
    const rows = Math.ceil((spec.batchSize * AHEAD_MS) / ms);
    return Math.max(spec.batchSize, Math.min(batchesAhead * spec.batchSize, rows));
  };

  // Successes are settled together: those that end while a settle is being
  // written wait for it and go in the next one, so under load a statement
  // (and its commit) carries many rows rather than each turn of the event
  // loop writing its own. At most SETTLES_AT_ONCE are out at a time.
  // Retries and failures, the rare case, are settled one by one.
  let successes: Array<{
    claim: T;
    statusCode: number | null;
    attempt: NewDeliveryAttempt | undefined;
    settled: (ok: boolean) => void;
    error: (e: unknown) => void;
  }> = [];
  let settlesOut = 0;
  async function settleSuccesses(): Promise<void> {
    const batch = successes;
    successes = [];
    try {
      const settled = await settleSucceeded(store, spec.table, batch, isoTime(clock.now()));
      for (const success of batch) success.settled(settled.get(success.claim.id) === success.claim.attempts);
    } catch (error) {
      for (const success of batch) success.error(error);
    }
  }
  function settleWaiting(): void {
    // A second statement only for a batch of successes: one at a time carries more rows a commit.
    const allowed = successes.length >= spec.batchSize ? SETTLES_AT_ONCE : 1;
    if (successes.length === 0 || settlesOut >= allowed) return;
    settlesOut++;
    // Successes that end before this runs join it: a statement carries them all.
    setImmediate(() => {
      // An earlier settle, scheduled before, took them all.
      if (successes.length === 0) {
        settlesOut--;
        return;
      }
      settleSuccesses().finally(() => {
        settlesOut--;
        settleWaiting();
      });
    });
  }
  const settleSuccess = (claim: T, statusCode: number | null, attempt: NewDeliveryAttempt | undefined) =>
    new Promise<boolean>((settled, error) => {
      successes.push({ claim, statusCode, attempt, settled, error });
      settleWaiting();
    });

  /** One attempt and its settle; `answered` is told as soon as the attempt itself has ended, and how long it took. */
  async function run(item: T, answered: (ms: number) => void): Promise<void> {
    const at = clock.now();
    const started = performance.now();
    let result: AttemptResult;
    let took = 0;
    try {
      result = await spec.attempt(item, at);
    } finally {
      took = performance.now() - started;
      answered(took);
    }
    const attempt = spec.record?.(item, result, isoTime(at), Math.round(took));
    const now = clock.now();
    const outcome = nextAttempt(result, item.attempts, config.retryScheduleMs, now);
    const settled =
      outcome.kind === 'succeeded'
        ? await settleSuccess(item, outcome.statusCode, attempt)
        : await settle(store, spec.table, item, outcome, isoTime(now), attempt);
    if (settled) metrics.outboxAttempts.inc({ queue: spec.table, outcome: outcome.kind });
    if (settled && outcome.kind === 'failed') spec.failed(item, outcome.error);
    if (settled && !result.ok) await spec.afterFailure?.(item, result, now);
  }

  async function claim(limit: number): Promise<T[]> {
    const now = clock.now();
    return spec.claim({
      now: isoTime(now),
      // A claim outlives any attempt (config checks OUTBOUND_TIMEOUT_MS is less); a crashed worker's claims fall due after it.
      leaseUntil: isoTime(new Date(now.getTime() + config.outboxLeaseMs)),
      limit,
    });
  }

  // Attempts run side by side, up to a batch at once. A slot is free once its
  // attempt has its answer: recording it (the settle, a database round trip
  // with its commit) goes on beside the next attempts, up to batchesAhead
  // batches of answers waiting for it. The next rows are claimed before slots
  // free up, as many ahead as rowsAhead says, so a slot that frees starts the
  // next attempt without waiting for a claim's round trips. A row claimed
  // ahead that could no longer finish within its lease, or that has waited far
  // longer than the rows ahead should last, is handed back unattempted. A
  // wake-up (new work written) claims again at once; otherwise, while
  // attempts are out, the queue is looked at every RECLAIM_MS.
  //
  // One claim is out at a time. Of two, the later could take another
  // developer's new row while the earlier, answered first, filled the slots
  // that had freed up; that row would then wait behind them all, a whole
  // outbound timeout when they hang.
  return async (context: TickContext): Promise<number> => {
    let attempting = 0;
    let unsettled = 0;
    let ahead: Array<{ item: T; startBy: number }> = [];
    // The earliest startBy in `ahead`, or earlier (rows started since are not taken out).
    let earliestStartBy = Number.POSITIVE_INFINITY;
    let progressed: (() => void) | undefined;
    let lookAgainAt = 0;
    // The latest a row claimed ahead may start: its attempt must end within the claim's lease.
    const startWithin = config.outboxLeaseMs - config.outboundTimeoutMs;
    // And sooner, by AHEAD_STALE_AFTER: quick receivers that turned slow
    // (every attempt running to its timeout) would otherwise keep a few
    // batches of rows claimed ahead for several timeouts, and no new claim
    // would be made, another developer's new row included.
    const startByFor = (claimedAt: number) => {
      const ms = attemptMsNow();
      const within = ms === undefined ? startWithin : AHEAD_STALE_AFTER * Math.max(AHEAD_MS, ms);
      return claimedAt + Math.min(startWithin, within);
    };
    // Rows claimed ahead that can no longer start in time go back to the queue, in one statement.
    const releaseLate = () => {
      const now = Date.now();
      if (now <= earliestStartBy) return;
      const late: T[] = [];
      const onTime: typeof ahead = [];
      earliestStartBy = Number.POSITIVE_INFINITY;
      for (const row of ahead) {
        if (now > row.startBy) late.push(row.item);
        else {
          onTime.push(row);
          earliestStartBy = Math.min(earliestStartBy, row.startBy);
        }
      }
      ahead = onTime;
      if (late.length === 0) return;
      unsettled += late.length;
      release(store, spec.table, late)
        .catch((error) =>
          logger.error({ err: error, table: spec.table, rows: late.length }, 'outbox claims not released'),
        )
        .finally(() => {
          unsettled -= late.length;
          progressed?.();
        });
    };
    const start = () => {
      releaseLate();
      while (attempting < spec.batchSize && ahead.length > 0) {
        const { item } = ahead.shift() as { item: T; startBy: number };
        unsettled++;
        attempting++;
        run(item, (ms) => {
          attemptTook(ms);
          attempting--;
          start();
          progressed?.();
        })
          .catch((error) =>
            logger.error({ err: error, table: spec.table, id: item.id }, 'outbox attempt could not be recorded'),
          )
          .finally(ended);
      }
    };
    const ended = () => {
      unsettled--;
      progressed?.();
    };
    // Rows asked for by the claim out; 0 when none is (a claim asks for half a batch or more).
    let claiming = 0;
    let claimFailure: { error: unknown } | undefined;
    const held = () => attempting + ahead.length + claiming;
    const wanted = () => spec.batchSize + rowsAhead() - held();
    const mayClaim = () =>
      !context.stopping &&
      wanted() >= Math.max(spec.batchSize, rowsAhead()) / 2 &&
      unsettled - attempting < batchesAhead * spec.batchSize;
    const canClaim = () => claiming === 0 && claimFailure === undefined && mayClaim();
    const claimMore = () => {
      if (canClaim() && Date.now() >= lookAgainAt) {
        const limit = wanted();
        const claimedAt = Date.now();
        claiming = limit;
        claim(limit)
          .then(
            (items) => {
              if (items.length < limit) lookAgainAt = Date.now() + RECLAIM_MS;
              const startBy = startByFor(claimedAt);
              if (items.length > 0) earliestStartBy = Math.min(earliestStartBy, startBy);
              for (const item of items) ahead.push({ item, startBy });
            },
            (error: unknown) => {
              claimFailure = { error };
            },
          )
          .finally(() => {
            claiming = 0;
            start();
            progressed?.();
          });
      }
    };
    for (;;) {
      claimMore();
      if (claimFailure !== undefined && claiming === 0) {
        const { error } = claimFailure;
        claimFailure = undefined;
        // With attempts still out, keep them in this tick (stop() waits for
        // them) and try the claim again in a while; with none, let the loop
        // log and retry.
        if (unsettled === 0 && ahead.length === 0) throw error;
        logger.error({ err: error, table: spec.table }, 'outbox claim failed; retrying');
        lookAgainAt = Date.now() + CLAIM_RETRY_MS;
        continue;
      }
      if (unsettled === 0 && ahead.length === 0 && claiming === 0) break;
      const someProgress = new Promise<boolean>((resolve) => {
        progressed = () => resolve(false);
      });
      const woken = canClaim()
        ? await context.pause(Math.max(0, lookAgainAt - Date.now()), someProgress)
        : await someProgress;
      if (woken) lookAgainAt = 0;
    }
    if (context.stopping) return 0;
    const next = await nextDue(store, spec.table);
    if (next === null) return config.queuePollMs;
    return Math.min(config.queuePollMs, Math.max(0, Date.parse(next) - clock.now().getTime()));
  };
}
