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
