// Time is injected so tests can move it (month rollover, expiry) without sleeping.
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** ISO 8601 UTC with milliseconds: fixed width, so text order is time order in both databases. */
export const isoTime = (date: Date): string => date.toISOString();

/** The later of two ISO 8601 UTC times (as isoTime writes them, they sort as text). */
export const laterTime = (a: string, b: string): string => (a < b ? b : a);
