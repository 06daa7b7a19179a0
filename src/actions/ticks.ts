// A round of background work, as a concern module (expiry, follow-ups,
// deliveries, notifications, the title index) exports it and the worker's
// loops (src/worker/loop.ts) run it: the module decides and writes, the loop
// only schedules.

/** What a tick may ask of its loop. */
export interface TickContext {
  /** True once stop() was called: finish what is in hand, start nothing new. */
  readonly stopping: boolean;
  /**
   * Resolves after `ms`, as soon as `until` (if given) settles, or as soon as
   * the loop is woken or stopped; true when woken or stopped. A wake that
   * comes once it has ended ends the next pause at once.
   */
  pause(ms: number, until?: Promise<unknown>): Promise<boolean>;
}

/** One round of work; resolves to how long to sleep before the next. */
export type Tick = (context: TickContext) => Promise<number>;
