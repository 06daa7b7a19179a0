import { isoTime } from './clock.js';

// How a webhook delivery or a notification is retried. After a failed
// attempt, the next one comes one gap of the retry schedule
// (WEBHOOK_RETRY_SCHEDULE_MS, default 30 s, 60 s, 120 s) later; when the
// schedule is used up the row fails for good. Only a success ends it early.
// A receiver that asks for more time (Slack's 429 with Retry-After) gets it:
// the next attempt comes no sooner than it said. A failure no retry can mend
// (`final`: Slack knows no such user) fails the row at once.

export type AttemptResult =
  | { ok: true; statusCode: number | null; responseBody?: string }
  | {
      ok: false;
      statusCode: number | null;
      error: string;
      responseBody?: string;
      retryAfterMs?: number;
      final?: boolean;
    };

/** An attempt's outcome, as the row is settled: done, due again at a time, or failed for good. */
export type AttemptOutcome =
  | { kind: 'succeeded'; statusCode: number | null }
  | { kind: 'retry'; statusCode: number | null; error: string; nextAttemptAt: string }
  | { kind: 'failed'; statusCode: number | null; error: string };

/** What happens after an attempt: done, again after the next gap, or failed for good. */
export function nextAttempt(result: AttemptResult, attempts: number, schedule: number[], now: Date): AttemptOutcome {
  if (result.ok) return { kind: 'succeeded', statusCode: result.statusCode };
  const gap = result.final ? undefined : schedule[attempts - 1];
  if (gap === undefined) return { kind: 'failed', statusCode: result.statusCode, error: result.error };
  return {
    kind: 'retry',
    statusCode: result.statusCode,
    error: result.error,
    nextAttemptAt: isoTime(new Date(now.getTime() + Math.max(gap, result.retryAfterMs ?? 0))),
  };
}
