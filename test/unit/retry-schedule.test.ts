import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { type AttemptResult, nextAttempt } from '../../src/domain/retry-schedule.js';

// What follows an attempt of a webhook delivery or notification: done on
// success; after a failure, another attempt one gap of the retry schedule
// later, until the schedule is used up and the row fails for good.

const now = new Date('2026-11-26T10:00:00.000Z');
const at = (ms: number) => new Date(now.getTime() + ms).toISOString();
const failure: AttemptResult = { ok: false, statusCode: 503, error: 'HTTP 503' };
const schedule = [30_000, 60_000, 120_000];

describe('nextAttempt', () => {
  it('settles a success whatever the attempt number, with its status code', () => {
    for (const attempts of [1, 3, 4, 99]) {
      expect(nextAttempt({ ok: true, statusCode: 204 }, attempts, schedule, now)).toEqual({
        kind: 'succeeded',
        statusCode: 204,
      });
    }
    expect(nextAttempt({ ok: true, statusCode: null }, 1, schedule, now)).toEqual({
      kind: 'succeeded',
      statusCode: null,
    });
  });

  it('retries the n-th failed attempt after the n-th gap of the schedule', () => {
    expect(nextAttempt(failure, 1, schedule, now)).toEqual({
      kind: 'retry',
      statusCode: 503,
      error: 'HTTP 503',
      nextAttemptAt: at(30_000),
    });
    expect(nextAttempt(failure, 2, schedule, now)).toMatchObject({ kind: 'retry', nextAttemptAt: at(60_000) });
  });

  it('still retries after the last step, once, then gives up', () => {
    expect(nextAttempt(failure, 3, schedule, now)).toMatchObject({ kind: 'retry', nextAttemptAt: at(120_000) });
    expect(nextAttempt(failure, 4, schedule, now)).toEqual({ kind: 'failed', statusCode: 503, error: 'HTTP 503' });
    expect(nextAttempt(failure, 5, schedule, now)).toMatchObject({ kind: 'failed' });
  });

  it('keeps a failure without a status (a refused connection) as null', () => {
    const refused: AttemptResult = { ok: false, statusCode: null, error: 'connect ECONNREFUSED' };
    expect(nextAttempt(refused, 1, schedule, now)).toEqual({
      kind: 'retry',
      statusCode: null,
      error: 'connect ECONNREFUSED',
      nextAttemptAt: at(30_000),
    });
    expect(nextAttempt(refused, 4, schedule, now)).toEqual({
      kind: 'failed',
      statusCode: null,
      error: 'connect ECONNREFUSED',
    });
  });

  it('fails at the first failure when the schedule is empty, and honours a zero gap', () => {
    expect(nextAttempt(failure, 1, [], now)).toMatchObject({ kind: 'failed' });
    expect(nextAttempt(failure, 1, [0], now)).toMatchObject({ kind: 'retry', nextAttemptAt: at(0) });
  });

  it('gives a dead endpoint 1 + 3 attempts, 30 s, 60 s and 120 s apart, with the default schedule', () => {
    const { retryScheduleMs } = loadConfig({});
    const gaps: number[] = [];
    let attempts = 1;
    let clock = now;
    for (;;) {
      const outcome = nextAttempt(failure, attempts, retryScheduleMs, clock);
      if (outcome.kind !== 'retry') {
        expect(outcome.kind).toBe('failed');
        break;
      }
      const next = new Date(outcome.nextAttemptAt);
      gaps.push(next.getTime() - clock.getTime());
      clock = next;
      attempts++;
    }
    expect(attempts).toBe(4);
    expect(gaps).toEqual([30_000, 60_000, 120_000]);
  });
});
