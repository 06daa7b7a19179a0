// Durations on the command line: "90s", "30m", "2h", "7d", "1h30m" (a bare
// number is refused: "30" could mean seconds or minutes). (Time left is
// written by domain/time-format.ts.)
import { readDuration } from '../domain/units.js';
import { UsageError } from './common.js';

/** Whole seconds in `text`, or a UsageError naming `flag`. */
export function parseDuration(text: string, flag: string): number {
  const seconds = readDuration(text, 'refused');
  if (typeof seconds === 'number') return seconds;
  const trimmed = text.trim().toLowerCase();
  if (seconds.problem === 'no unit') {
    throw new UsageError(
      `${flag}: "${text.trim()}" has no unit: write ${trimmed}s for seconds or ${trimmed}m for minutes (units: s, m, h, d)`,
    );
  }
  throw new UsageError(`${flag}: not a duration: "${text}" (try 90s, 30m, 2h, 1d or 1h30m)`);
}

/** Whole seconds as parseDuration reads them back: "90s" → "1m30s", 3600 → "1h", 86400 → "1d". */
export function formatDuration(seconds: number): string {
  let left = Math.max(0, Math.round(seconds));
  if (left === 0) return '0s';
  let text = '';
  for (const [unit, size] of [
    ['d', 86_400],
    ['h', 3600],
    ['m', 60],
    ['s', 1],
  ] as const) {
    if (left >= size) {
      text += `${Math.floor(left / size)}${unit}`;
      left %= size;
    }
  }
  return text;
}
