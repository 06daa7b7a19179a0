import type { ServiceContext } from '../context.js';
import { isoTime } from '../domain/clock.js';
import { type AttemptResult, nextAttempt } from '../domain/retry-schedule.js';
import { storableText } from '../domain/webhooks.js';
import type { PostResult } from '../net/safe-client.js';
import type { NewDeliveryAttempt } from '../store/delivery-attempts.js';
import { type Claim, claimDue, nextDue, type OutboxTable, settle, settleSucceeded } from '../store/outbox.js';
import type { TickContext } from './ticks.js';

// One tick of an outbox queue (webhook deliveries, notifications): claim due
// rows, attempt each, settle each, until nothing more is due. What follows a
// failed attempt is domain/retry-schedule.ts.

/** While attempts are out, how often to look for newly due rows when not woken. */
const RECLAIM_MS = 100;
const CLAIM_RETRY_MS = 1000;

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
  load(claims: Claim[]): Promise<T[]>;
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

  // Successes that end in the same turn of the event loop are settled by one
  // statement; retries and failures, the rare case, one by one.
  let successes: Array<{
    claim: T;
    statusCode: number | null;
    attempt: NewDeliveryAttempt | undefined;
    settled: (ok: boolean) => void;
    error: (e: unknown) => void;
  }> = [];
  async function settleSuccesses(): Promise<void> {
    const batch = successes;
    successes = [];
    try {
      const settled = await settleSucceeded(store, spec.table, batch, isoTime(clock.now()));
      for (const success of batch) success.settled(settled.has(success.claim.id));
    } catch (error) {
      for (const success of batch) success.error(error);
    }
  }
  const settleSuccess = (claim: T, statusCode: number | null, attempt: NewDeliveryAttempt | undefined) =>
    new Promise<boolean>((settled, error) => {
      successes.push({ claim, statusCode, attempt, settled, error });
      if (successes.length === 1) setImmediate(settleSuccesses);
    });

  async function run(item: T): Promise<void> {
    const at = clock.now();
    const started = performance.now();
    const result = await spec.attempt(item, at);
    const attempt = spec.record?.(item, result, isoTime(at), Math.round(performance.now() - started));
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
    const claims = await claimDue(store, spec.table, {
      now: isoTime(now),
      // A claim outlives any attempt (config checks OUTBOUND_TIMEOUT_MS is less); a crashed worker's claims fall due after it.
      leaseUntil: isoTime(new Date(now.getTime() + config.outboxLeaseMs)),
      limit,
    });
    return claims.length > 0 ? spec.load(claims) : [];
  }

  // Attempts run side by side, up to a batch at once. More are claimed as soon
  // as half the slots are free, so one slow receiver holds one slot, not the
  // whole batch. A wake-up (new work written) claims again at once; otherwise,
  // while attempts are out, the queue is looked at every RECLAIM_MS.
  return async (context: TickContext): Promise<number> => {
    let inFlight = 0;
    let attemptEnded: (() => void) | undefined;
    let lookAgainAt = 0;
    const room = () => spec.batchSize - inFlight;
    const mayClaim = () => !context.stopping && room() >= spec.batchSize / 2;
    for (;;) {
      if (mayClaim() && Date.now() >= lookAgainAt) {
        let items: T[] = [];
        try {
          const wanted = room();
          items = await claim(wanted);
          if (items.length < wanted) lookAgainAt = Date.now() + RECLAIM_MS;
        } catch (error) {
          // With attempts still out, keep them in this tick (stop() waits for
          // them) and try the claim again in a while; with none, let the loop
          // log and retry.
          if (inFlight === 0) throw error;
          logger.error({ err: error, table: spec.table }, 'outbox claim failed; retrying');
          lookAgainAt = Date.now() + CLAIM_RETRY_MS;
        }
        for (const item of items) {
          inFlight++;
          run(item)
            .catch((error) =>
              logger.error({ err: error, table: spec.table, id: item.id }, 'outbox attempt could not be recorded'),
            )
            .finally(() => {
              inFlight--;
              attemptEnded?.();
            });
        }
      }
      if (inFlight === 0) break;
      const oneEnded = new Promise<boolean>((resolve) => {
        attemptEnded = () => resolve(false);
      });
      const woken = await Promise.race(
        mayClaim() ? [oneEnded, context.pause(Math.max(0, lookAgainAt - Date.now()))] : [oneEnded],
      );
      if (woken) lookAgainAt = 0;
    }
    if (context.stopping) return 0;
    const next = await nextDue(store, spec.table);
    if (next === null) return config.queuePollMs;
    return Math.min(config.queuePollMs, Math.max(0, Date.parse(next) - clock.now().getTime()));
  };
}
