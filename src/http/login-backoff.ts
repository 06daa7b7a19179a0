import { setTimeout as sleep } from 'node:timers/promises';
import type { RateLimit } from '../config.js';
import { ApiError } from '../errors.js';

// Back-off on the password guesses for one account, whoever sends them. The
// first `max` attempts of a quiet account go through at once; after that,
// attempts are spaced windowMs/max apart: each waits its turn (at most one
// spacing, and never more than MAX_WAIT_MS) and is refused with 429 when its
// turn is further away. A successful login changes nothing: clearing the
// record would hand guessers a fresh burst, and tell them the owner had just
// logged in.
//
// So guessing an account's password stays at `max` attempts per window
// however many addresses the guesses come from, yet strangers' wrong guesses
// cannot lock the owner out: once they stop, the owner's next attempt is
// checked within one spacing. While guesses keep arriving, the owner waits
// in the same line (the password cannot be looked at before its turn without
// telling a guesser whether it was right).
//
// This is GCRA (a leaky bucket kept as one time per key), in this process's
// memory like RateLimiter.

export const MAX_WAIT_MS = 10_000;

export class LoginBackoff {
  /** Per key: when the bucket would be empty again (GCRA's "theoretical arrival time"). */
  private readonly emptyAt = new Map<string, number>();
  private readonly spacingMs: number;
  private readonly burstMs: number;
  private readonly maxWaitMs: number;
  private lastSweep = 0;

  constructor(
    private readonly limit: RateLimit,
    private readonly now: () => number = Date.now,
  ) {
    this.spacingMs = limit.windowMs / limit.max;
    this.burstMs = limit.windowMs - this.spacingMs;
    this.maxWaitMs = Math.min(this.spacingMs, MAX_WAIT_MS);
  }

  /** Resolves when this attempt on `key` may be checked; throws 429 when its turn is too far away. */
  async turn(key: string): Promise<void> {
    const now = this.now();
    this.sweep(now);
    const emptyAt = Math.max(this.emptyAt.get(key) ?? now, now);
    const waitMs = emptyAt - this.burstMs - now;
    if (waitMs > this.maxWaitMs) {
      const seconds = Math.max(1, Math.ceil(waitMs / 1000));
      throw new ApiError(
        'rate_limited',
        `Too many login attempts for this account; try again in ${seconds} s.`,
        undefined,
        { 'retry-after': String(seconds) },
      );
    }
    this.emptyAt.set(key, emptyAt + this.spacingMs);
    if (waitMs > 0) await sleep(waitMs);
  }

  private sweep(now: number): void {
    if (now - this.lastSweep < this.limit.windowMs) return;
    this.lastSweep = now;
    for (const [key, emptyAt] of this.emptyAt) if (emptyAt <= now) this.emptyAt.delete(key);
  }
}
