// A long-poll (?wait=N): read, and while the answer is not final and time is
// left, sleep until a wake-up and read again. A wake-up is only a hint, so the
// answer always comes from a fresh read, and a waiter re-reads at least every
// RECHECK_MS in case a wake-up was signalled where this instance cannot hear it.

/** The longest a client may ask to wait, in seconds. */
export const MAX_WAIT_SECONDS = 60;
/** A waiter reads again at least this often, woken or not. */
export const RECHECK_MS = 1000;

export interface LongPoll<T> {
  /** How long to wait at most, in seconds; 0 reads once. */
  waitSeconds: number;
  /** Reads the current answer; an error ends the poll with that error. */
  read: () => Promise<T>;
  /** True when this answer is to be given at once. */
  isDone: (value: T) => boolean;
  /** Resolves when `value` may have changed, after `ms`, or when the service closes. */
  wake: (value: T, ms: number) => Promise<void>;
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
    await untilAborted(poll.wake(value, Math.min(remaining, RECHECK_MS)), poll.signal);
    if (poll.signal?.aborted) return value;
  }
}

/** Resolves with `wake`, or as soon as `signal` aborts. */
function untilAborted(wake: Promise<void>, signal: AbortSignal | undefined): Promise<void> {
  if (!signal) return wake;
  let onAbort: () => void = () => {};
  const aborted = new Promise<void>((resolve) => {
    onAbort = resolve;
    signal.addEventListener('abort', onAbort, { once: true });
  });
  return Promise.race([wake, aborted]).finally(() => signal.removeEventListener('abort', onAbort));
}
