import { setImmediate as yieldToRequests } from 'node:timers/promises';
import type { Client } from 'pg';
import type { Logger } from './logger.js';
import { pendingAmong } from './store/pauses.js';
import type { Store } from './store/store.js';
import { KEYS_CHANNEL, PAUSE_CHANNEL, QUEUED_CHANNEL } from './store/wake-up-channels.js';

// Waking this instance's waiters and workers when a write commits, here or
// (on PostgreSQL) on another instance. The writes announce themselves
// (store/wake-ups.ts) on `store.wakeUps`; WakeUpListener relays other
// instances' NOTIFYs onto it; PauseWaiters parks the long-polls and wakes them.
//
// A wake-up is only a hint: a woken waiter re-reads the database. In case one
// was missed (a NOTIFY sent while the listener was reconnecting), one shared
// re-check every RECHECK_MS reads the status of every pause waited on here in
// one query and wakes the waiters of those no longer pending.
//
// A waiter costs O(1) to park and to wake, however many there are: a set of
// wake functions per pause id (and one for "any change"), each with its own
// timer and abort listener, removed by identity.

/** Waiters are re-checked against the database at least this often, in ms. */
export const RECHECK_MS = 1000;
/**
 * Pause ids per query of the shared re-check. On SQLite a query holds the
 * event loop while it runs, so the round yields between small chunks.
 */
const RECHECK_CHUNK = 200;

type Wake = () => void;

/** Something that keeps API keys and must hear when they are rotated. */
export interface KeyRotationWatcher {
  forget(developerId: string | null): void;
  /** False while rotations on other instances cannot be heard. */
  setEnabled(enabled: boolean): void;
}

/**
 * The long-polls of this instance waiting on a pause (or on any change), and
 * the cap on how many waits one API key holds.
 */
export class PauseWaiters {
  /** The waiters of each pause, by its id. */
  private readonly pauseWaiters = new Map<string, Set<Wake>>();
  /** The waiters of any change. */
  private readonly anyWaiters = new Set<Wake>();
  private recheckTimer: NodeJS.Timeout | undefined;
  private rechecking: Promise<void> | undefined;
  /** Waits held per holder (an API key), for the cap on concurrent waits. */
  private readonly slotsHeld = new Map<string, number>();
  private readonly stopHearing: () => void;
  private closed = false;

  /** `recheckMs`: how often the shared re-check runs (RECHECK_MS; tests make it long to see wake-ups alone). */
  constructor(
    private readonly store: Store,
    private readonly logger: Logger,
    private readonly recheckMs = RECHECK_MS,
  ) {
    this.stopHearing = store.wakeUps.pausesChanged.on((pauseIds) => this.wake(pauseIds));
  }

  /** Wakes the waiters of these pauses, and those of any change. */
  wake(pauseIds: Iterable<string>): void {
    for (const id of pauseIds) this.wakePause(id);
    for (const wake of this.anyWaiters) wake();
  }

  /** Resolves when any pause may have changed, after `ms`, when closing, or when `signal` aborts. */
  waitAny(ms: number, signal?: AbortSignal): Promise<void> {
    return this.park(this.anyWaiters, ms, signal);
  }

  /**
   * Resolves when the pause may have left pending (a wake-up for it, or the
   * shared re-check found it no longer pending), after `ms`, when closing, or
   * when `signal` aborts.
   */
  waitForPause(pauseId: string, ms: number, signal?: AbortSignal): Promise<void> {
    let waiters = this.pauseWaiters.get(pauseId);
    if (!waiters) {
      waiters = new Set();
      this.pauseWaiters.set(pauseId, waiters);
    }
    const promise = this.park(waiters, ms, signal, () => {
      if (this.pauseWaiters.get(pauseId)?.size === 0) this.pauseWaiters.delete(pauseId);
    });
    if (this.pauseWaiters.size > 0)
      this.recheckTimer ??= setInterval(() => void this.recheck(), this.recheckMs).unref();
    return promise;
  }

  /** How many waits are parked here (of pauses and of any change). */
  get waiterCount(): number {
    let count = this.anyWaiters.size;
    for (const waiters of this.pauseWaiters.values()) count += waiters.size;
    return count;
  }

  /**
   * The shared re-check: reads the status of every pause waited on, in one
   * query per RECHECK_CHUNK ids, and wakes the waiters of those no longer
   * pending (or gone). One runs at a time; a call meanwhile joins it.
   */
  recheck(): Promise<void> {
    this.rechecking ??= this.recheckAll().finally(() => {
      this.rechecking = undefined;
    });
    return this.rechecking;
  }

  private async recheckAll(): Promise<void> {
    if (this.pauseWaiters.size === 0) {
      clearInterval(this.recheckTimer);
      this.recheckTimer = undefined;
      return;
    }
    const ids = [...this.pauseWaiters.keys()];
    for (let i = 0; i < ids.length && !this.closed; i += RECHECK_CHUNK) {
      if (i > 0) await yieldToRequests();
      const chunk = ids.slice(i, i + RECHECK_CHUNK);
      try {
        const pending = await pendingAmong(this.store, chunk);
        for (const id of chunk) if (!pending.has(id)) this.wakePause(id);
      } catch (error) {
        // The waiters re-read at their deadline anyway; the next round tries again.
        this.logger.warn({ err: error }, 'the re-check of waited-on pauses failed');
      }
    }
  }

  private wakePause(pauseId: string): void {
    const waiters = this.pauseWaiters.get(pauseId);
    if (waiters) for (const wake of waiters) wake();
  }

  /** Adds a waiter to `waiters` until it is woken, its time is up, the service closes or `signal` aborts. */
  private park(waiters: Set<Wake>, ms: number, signal: AbortSignal | undefined, onEmpty?: () => void): Promise<void> {
    if (this.closed || signal?.aborted) {
      onEmpty?.();
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', wake);
        waiters.delete(wake);
        if (waiters.size === 0) onEmpty?.();
        resolve();
      };
      const timer = setTimeout(wake, ms);
      signal?.addEventListener('abort', wake, { once: true });
      waiters.add(wake);
    });
  }

  /**
   * Takes one of `max` concurrent wait slots of `holder`: a function that
   * gives it back (once), or undefined when all are taken.
   */
  takeWaitSlot(holder: string, max: number): (() => void) | undefined {
    const held = this.slotsHeld.get(holder) ?? 0;
    if (held >= max) return undefined;
    this.slotsHeld.set(holder, held + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.slotsHeld.get(holder) ?? 1) - 1;
      if (left > 0) this.slotsHeld.set(holder, left);
      else this.slotsHeld.delete(holder);
    };
  }

  /** How many wait slots are held, by all holders. */
  get waitSlotsHeld(): number {
    let count = 0;
    for (const held of this.slotsHeld.values()) count += held;
    return count;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  close(): void {
    this.closed = true;
    this.stopHearing();
    clearInterval(this.recheckTimer);
    this.recheckTimer = undefined;
    // Every waiter answers with what it has; one pass, then none can park.
    for (const waiters of [...this.pauseWaiters.values(), this.anyWaiters]) for (const wake of waiters) wake();
  }
}

/**
 * On PostgreSQL, hears the wake-ups of every instance's commits (LISTEN) and
 * relays them onto `store.wakeUps`, where this instance's own commits announce
 * theirs; and tells the API-key caches whether rotations made elsewhere can be
 * heard. On SQLite one process serves the API, and there is nothing to hear.
 */
export class WakeUpListener {
  private readonly keyWatchers: KeyRotationWatcher[] = [];
  /** Unsubscribes the key watchers from this store's wake-ups, at close. */
  private readonly stopHearing: Array<() => void> = [];
  private listener: Client | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly store: Store,
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    if (this.store.config.kind === 'postgres') await this.listen(this.store.config.url);
  }

  /** `watcher` forgets a developer's keys when they are rotated, here or on another instance. */
  watchKeyRotations(watcher: KeyRotationWatcher): void {
    this.keyWatchers.push(watcher);
    this.stopHearing.push(this.store.wakeUps.keysRotated.on((developerId) => watcher.forget(developerId)));
    watcher.setEnabled(this.hearsOtherInstances);
  }

  /** Always on SQLite (one process serves the API); on PostgreSQL while LISTEN is up. */
  private get hearsOtherInstances(): boolean {
    return this.store.config.kind !== 'postgres' || this.listener !== undefined;
  }

  private setHearing(): void {
    for (const watcher of this.keyWatchers) watcher.setEnabled(this.hearsOtherInstances);
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const stop of this.stopHearing.splice(0)) stop();
    clearTimeout(this.reconnectTimer);
    const listener = this.listener;
    this.listener = undefined;
    await listener?.end().catch(() => {});
  }

  private async listen(url: string): Promise<void> {
    const { default: pg } = await import('pg'); // only on PostgreSQL
    const client = new pg.Client({ connectionString: url });
    const { wakeUps } = this.store;
    client.on('notification', (message) => {
      if (message.channel === QUEUED_CHANNEL) wakeUps.workQueued.emit();
      else if (!message.payload) return;
      else if (message.channel === KEYS_CHANNEL) wakeUps.keysRotated.emit(message.payload);
      else wakeUps.pausesChanged.emit([message.payload]);
    });
    client.on('error', (error) => {
      this.logger.warn({ err: error }, 'the wake-up listener lost its connection; reconnecting');
      this.reconnect(url, client);
    });
    await client.connect();
    await client.query(`listen ${PAUSE_CHANNEL}; listen ${KEYS_CHANNEL}; listen ${QUEUED_CHANNEL}`);
    this.listener = client;
    this.setHearing();
  }

  private reconnect(url: string, failed: Client): void {
    if (this.closed || this.listener !== failed) return;
    this.listener = undefined;
    this.setHearing();
    failed.end().catch(() => {});
    this.reconnectTimer = setTimeout(() => {
      this.listen(url).catch((error) => {
        this.logger.warn({ err: error }, 'the wake-up listener could not reconnect');
        this.listener = failed;
        this.reconnect(url, failed);
      });
    }, 1000);
  }
}
