import { describe, expect, it } from 'vitest';
import { formatTimeLeft, formatUtc, TIME_LEFT_JS } from '../../src/domain/time-format.js';

describe('time formats', () => {
  it('writes a time in UTC, named', () => {
    expect(formatUtc('2030-01-15T15:30:59.999Z')).toBe('2030-01-15 15:30 UTC');
  });

  it('words the time left in the largest two units', () => {
    const cases: Array<[number, string]> = [
      [-5000, '0 s'],
      [9_999, '9 s'],
      [(4 * 60 + 10) * 1000, '4 min 10 s'],
      [(3600 + 5 * 60 + 59) * 1000, '1 h 5 min'],
      [(2 * 86400 + 3 * 3600 + 59 * 60) * 1000, '2 d 3 h'],
    ];
    for (const [ms, words] of cases) expect(formatTimeLeft(ms)).toBe(words);
  });

  it("gives the page's script the same function, standing on its own", () => {
    const inBrowser = new Function(`${TIME_LEFT_JS}; return formatTimeLeft;`)() as (ms: number) => string;
    for (const ms of [0, 9_999, 250_000, 3_959_000, 183_540_000]) expect(inBrowser(ms)).toBe(formatTimeLeft(ms));
  });
});
