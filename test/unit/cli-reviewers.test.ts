import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/cli/common.js';
import { formatDuration, parseDuration } from '../../src/cli/duration.js';
import { parseReviewer, reviewerLabel } from '../../src/cli/reviewers.js';

// The pieces of `pausepoint ask --reviewer` that need no service: reading a
// reviewer from a flag, and the durations the CLI prints back.

describe('parseReviewer', () => {
  it('takes an address, or a name and an address', () => {
    expect(parseReviewer('ana@example.com', '--reviewer')).toEqual({ email: 'ana@example.com' });
    expect(parseReviewer('  Ana Lima <ana@example.com> ', '--reviewer')).toEqual({
      email: 'ana@example.com',
      name: 'Ana Lima',
    });
    expect(parseReviewer('"Lima, Ana" <ana@example.com>', '--reviewer')).toEqual({
      email: 'ana@example.com',
      name: 'Lima, Ana',
    });
    expect(parseReviewer('<ana@example.com>', '--reviewer')).toEqual({ email: 'ana@example.com' });
  });

  it('refuses what is not an address, naming the flag', () => {
    for (const bad of ['', 'ana', 'ana at example.com', 'Ana <ana@example.com', 'a@b@c', 'Ana <>', '<a b@c>']) {
      expect(() => parseReviewer(bad, '--escalate-to'), bad).toThrow(UsageError);
      expect(() => parseReviewer(bad, '--escalate-to'), bad).toThrow(/^--escalate-to: not an email address/);
    }
  });

  it('labels a reviewer as it was given', () => {
    expect(reviewerLabel({ email: 'ana@example.com', name: 'Ana Lima' })).toBe('Ana Lima <ana@example.com>');
    expect(reviewerLabel({ email: 'bo@example.com', name: null })).toBe('bo@example.com');
    for (const text of ['Ana Lima <ana@example.com>', 'bo@example.com']) {
      expect(reviewerLabel(parseReviewer(text, '--reviewer'))).toBe(text);
    }
  });
});

describe('formatDuration', () => {
  it('prints the units parseDuration reads', () => {
    expect(formatDuration(0)).toBe('0s');
    expect(formatDuration(90)).toBe('1m30s');
    expect(formatDuration(3600)).toBe('1h');
    expect(formatDuration(86_400 + 5400)).toBe('1d1h30m');
  });

  it('round-trips through parseDuration', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 400 * 86_400 }), (seconds) => {
        expect(parseDuration(formatDuration(seconds), '--x')).toBe(seconds);
      }),
    );
  });
});
