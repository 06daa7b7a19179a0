import type { onRequestHookHandler } from 'fastify';
import type { RateLimit } from '../config.js';
import { ApiError } from '../errors.js';

// A fixed-window counter per key, kept in this process's memory. Each instance
// counts for itself: behind a load balancer of N instances a client gets at
// most N times the limit, which is still a bound on guessing passwords.
export class RateLimiter {
  private readonly windows = new Map<string, { count: number; resetAt: number }>();
  private lastSweep = 0;

  constructor(
    private readonly limit: RateLimit,
    private readonly now: () => number = Date.now,
    /** What is refused, when it is more than "Too many attempts". */
    private readonly tooMany = 'Too many attempts',
  ) {}

  /** Counts one hit on each key; throws 429 when any of them is over its limit. */
  hit(...keys: string[]): void {
    this.charge(1, ...keys);
  }

  /** Counts `count` hits on each key at once (e.g. the messages of a batch); throws 429 when any is over its limit. */
  charge(count: number, ...keys: string[]): void {
    const now = this.now();
    this.sweep(now);
    let retryAfterMs = 0;
    for (const key of keys) {
      let window = this.windows.get(key);
      if (!window || window.resetAt <= now) {
        window = { count: 0, resetAt: now + this.limit.windowMs };
        this.windows.set(key, window);
      }
      window.count += count;
      if (window.count > this.limit.max) retryAfterMs = Math.max(retryAfterMs, window.resetAt - now);
    }
    if (retryAfterMs > 0) {
      const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
      throw new ApiError('rate_limited', `${this.tooMany}; try again in ${seconds} s.`, undefined, {
        'retry-after': String(seconds),
      });
    }
  }

  private sweep(now: number): void {
    if (now - this.lastSweep < this.limit.windowMs) return;
    this.lastSweep = now;
    for (const [key, window] of this.windows) if (window.resetAt <= now) this.windows.delete(key);
  }
}

/**
 * An onRequest hook (a callback, run before the body is read) that counts one
 * hit per client address under `prefix`, refusing with 429 over the limit.
 */
export function limitByAddress(limiter: RateLimiter, prefix: string): onRequestHookHandler {
  return (request, _reply, done) => {
    try {
      limiter.hit(`${prefix}:${request.ip}`);
    } catch (error) {
      return done(error as Error);
    }
    done();
  };
}
