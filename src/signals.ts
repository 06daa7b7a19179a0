import { EventEmitter } from 'node:events';
import type { Client } from 'pg';
import type { Logger } from './logger.js';
import type { Store } from './store/store.js';
import { KEYS_CHANNEL, PAUSE_CHANNEL, QUEUED_CHANNEL } from './store/wake-up-channels.js';

// "Pause X changed" wake-ups for long-polls, and "work was queued" wake-ups
// for the outbox workers. Every transition commits, then signals here; on
// PostgreSQL the transaction also sends NOTIFY, so every instance hears of it
// the moment it commits. A wake-up is only a hint: waiters re-read the
// database, and re-check at least once a second in case one was missed.

const ANY_CHANGE = Symbol('any change');
const QUEUED = Symbol('queued');

/** Something that keeps API keys and must hear when they are rotated. */
export interface KeyRotationWatcher {
  forget(developerId: string | null): void;
  /** False while rotations on other instances cannot be heard. */
  setEnabled(enabled: boolean): void;
}

export class PauseSignals {
  private readonly emitter = new EventEmitter().setMaxListeners(0);
  private readonly keyWatchers: KeyRotationWatcher[] = [];
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

  /**
   * Wakes local waiters of these pauses (and whoever listens for any change);
   * with `queued`, the outbox workers too. Call after the commit.
   */
  changed(pauseIds: Iterable<string>, options: { queued?: boolean } = {}): void {
    for (const id of pauseIds) this.emitter.emit(id);
    this.emitter.emit(ANY_CHANGE);
    if (options.queued) this.queued();
  }

  /** Wakes the outbox workers: deliveries or notifications were written. Call after the commit. */
  queued(): void {
    this.emitter.emit(QUEUED);
  }

  /** Calls `listener` after work was queued, here or (on PostgreSQL) on another instance. */
  onQueued(listener: () => void): void {
    this.emitter.on(QUEUED, listener);
  }

  /** Resolves when any pause may have changed, after `ms`, or when closing. */
  waitAny(ms: number): Promise<void> {
    return this.wait(ANY_CHANGE, ms);
  }

  /** Resolves when the pause may have changed, after `ms`, or when closing. */
  wait(pauseId: string | symbol, ms: number): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.emitter.off(pauseId, done);
        this.emitter.off('close', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.emitter.once(pauseId, done);
      this.emitter.once('close', done);
    });
  }

  /** Tells key caches that a developer's keys changed; call after the commit. */
  keysRotated(developerId: string): void {
    for (const watcher of this.keyWatchers) watcher.forget(developerId);
  }

  watchKeyRotations(watcher: KeyRotationWatcher): void {
    this.keyWatchers.push(watcher);
    watcher.setEnabled(this.hearsOtherInstances);
  }

  /** Always on SQLite (one process serves the API); on PostgreSQL while LISTEN is up. */
  private get hearsOtherInstances(): boolean {
    return this.store.config.kind !== 'postgres' || this.listener !== undefined;
  }

  private setHearing(): void {
    for (const watcher of this.keyWatchers) watcher.setEnabled(this.hearsOtherInstances);
  }

  get isClosed(): boolean {
    return this.closed;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.reconnectTimer);
    this.emitter.emit('close');
    const listener = this.listener;
    this.listener = undefined;
    await listener?.end().catch(() => {});
  }

  private async listen(url: string): Promise<void> {
    const { default: pg } = await import('pg'); // only on PostgreSQL
    const client = new pg.Client({ connectionString: url });
    client.on('notification', (message) => {
      if (message.channel === QUEUED_CHANNEL) this.queued();
      else if (!message.payload) return;
      else if (message.channel === KEYS_CHANNEL) this.keysRotated(message.payload);
      else this.changed([message.payload]);
    });
    client.on('error', (error) => {
      this.logger.warn({ err: error }, 'pause signal listener lost its connection; reconnecting');
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
        this.logger.warn({ err: error }, 'pause signal listener could not reconnect');
        this.listener = failed;
        this.reconnect(url, failed);
      });
    }, 1000);
  }
}
