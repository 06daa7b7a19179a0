// Limits as people read them, for every message and description that states
// one: written from the constant, never retyped ("30 days", "16 KiB").

const plural = (count: number, unit: string) => `${count.toLocaleString('en-US')} ${unit}${count === 1 ? '' : 's'}`;

/**
 * A whole number of seconds in the largest unit it is a whole number of:
 * "30 days", "2 hours", "55 seconds". A single day reads as "24 hours".
 */
export function formatSeconds(seconds: number): string {
  if (seconds % 86_400 === 0 && seconds >= 2 * 86_400) return plural(seconds / 86_400, 'day');
  if (seconds % 3600 === 0 && seconds > 0) return plural(seconds / 3600, 'hour');
  if (seconds % 60 === 0 && seconds > 0) return plural(seconds / 60, 'minute');
  return plural(seconds, 'second');
}

/** A size in the largest binary unit it is a whole number of: "16 KiB", "1 MiB", "500 bytes". */
export function formatBytes(bytes: number): string {
  if (bytes % (1024 * 1024) === 0 && bytes > 0) return `${(bytes / (1024 * 1024)).toLocaleString('en-US')} MiB`;
  if (bytes % 1024 === 0 && bytes > 0) return `${(bytes / 1024).toLocaleString('en-US')} KiB`;
  return plural(bytes, 'byte');
}

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/**
 * Whole seconds in a duration as people write it, "90s", "30m", "2h", "7d" or
 * "1h30m": a number, or why it is none. A bare number ("30", which could mean
 * seconds or minutes) is seconds only where `bareNumber` says so.
 */
export function readDuration(
  text: string,
  bareNumber: 'seconds' | 'refused',
): number | { problem: 'no unit' | 'not a duration' } {
  const trimmed = text.trim().toLowerCase();
  if (/^\d+$/.test(trimmed)) return bareNumber === 'seconds' ? Number(trimmed) : { problem: 'no unit' };
  const parts = [...trimmed.matchAll(/(\d+)([smhd])/g)];
  if (parts.length === 0 || parts.map((part) => part[0]).join('') !== trimmed) return { problem: 'not a duration' };
  return parts.reduce((total, [, amount, unit]) => total + Number(amount) * (UNIT_SECONDS[unit as string] ?? 0), 0);
}
