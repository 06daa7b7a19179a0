// A long-poll (?wait=N): read, and while the answer is not final and time is
// left, sleep until a wake-up and read again. A wake-up is only a hint, so the
// answer always comes from a fresh read. What wakes a waiter is up to `wake`:
// a pause's waiter is woken by the shared re-check (signals.ts) when it missed
// a wake-up; a waiter of something else passes at most RECHECK_MS to re-read.

export { RECHECK_MS } from '../signals.js';

/** The longest a client may ask to wait, in seconds. */
export const MAX_WAIT_SECONDS = 60;

export interface LongPoll<T> {
  /** How long to wait at most, in seconds; 0 reads once. */
  waitSeconds: number;
  /** Reads the current answer; an error ends the poll with that error. */
  read: () => Promise<T>;
  /** True when this answer is to be given at once. */
  isDone: (value: T) => boolean;
  /** Resolves when `value` may have changed, after `ms` (the time left), when the service closes or `signal` aborts. */
  wake: (value: T, ms: number, signal: AbortSignal | undefined) => Promise<void>;
  /** True once the service is closing: waiters answer with what they have. */
  isClosed: () => boolean;
  /** Ends the wait early with the last answer read, e.g. when the client has gone. */
  signal?: AbortSignal | undefined;
}

/** The first answer that is done, or the last one read when the wait is over. */
export async function longPoll<T>(poll: LongPoll<T>): Promise<T> {
  const deadline = Date.now() + poll.waitSeconds * 1000;
  for (;;) {
    const value = await poll.read();
    const remaining = deadline - Date.now();
    if (poll.isDone(value) || remaining <= 0 || poll.isClosed() || poll.signal?.aborted) return value;
    await poll.wake(value, remaining, poll.signal);
    if (poll.signal?.aborted) return value;
  }
}

/** Who holds a wait, and how many one holder may hold at once. */
export interface WaitCap {
  slots: { takeWaitSlot(holder: string, max: number): (() => void) | undefined };
  /** The holder (an API key's hash); none, no cap. */
  holder?: string | undefined;
  max: number;
}

/**
 * A long-poll that holds one of the holder's `max` wait slots while it waits.
 * Over the cap it reads once and answers at once, as a wait that ended early.
 */
export async function longPollWithinCap<T>(cap: WaitCap, poll: LongPoll<T>): Promise<T> {
  // Most reads do not wait: they take no slot and read once.
  if (poll.waitSeconds <= 0) return poll.read();
  const wants = poll.waitSeconds > 0 && cap.holder !== undefined;
  const release = wants ? cap.slots.takeWaitSlot(cap.holder as string, cap.max) : undefined;
  try {
    return await longPoll({ ...poll, waitSeconds: wants && !release ? 0 : poll.waitSeconds });
  } finally {
    release?.();
  }
}
