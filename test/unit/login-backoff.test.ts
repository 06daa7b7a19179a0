import { describe, expect, it } from 'vitest';
import { LoginBackoff } from '../../src/http/login-backoff.js';

// The per-account back-off on login attempts, on a clock the test holds.

describe('LoginBackoff', () => {
  const limit = { max: 3, windowMs: 60_000 };

  it('lets max attempts through at once, then one per window/max, and refuses a turn more than one spacing away', async () => {
    let now = 1_000_000;
    const backoff = new LoginBackoff(limit, () => now);
    for (let i = 0; i < 3; i++) await backoff.turn('a');
    // The fourth turn is 20 s away: more than the 10 s anyone waits.
    await expect(backoff.turn('a')).rejects.toMatchObject({ code: 'rate_limited', headers: { 'retry-after': '20' } });
    // Another account is not affected.
    await backoff.turn('b');
    now += 20_000;
    await backoff.turn('a');
    await expect(backoff.turn('a')).rejects.toMatchObject({ headers: { 'retry-after': '20' } });
  });

  it('waits for a turn less than one spacing away', async () => {
    const backoff = new LoginBackoff({ max: 2, windowMs: 200 }, Date.now);
    await backoff.turn('a');
    await backoff.turn('a');
    const before = Date.now();
    await backoff.turn('a'); // 100 ms away
    expect(Date.now() - before).toBeGreaterThanOrEqual(90);
  });
});
