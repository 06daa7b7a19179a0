import { EventEmitter } from 'node:events';
import pg from 'pg';
import type { Logger } from './logger.js';
import type { Store } from './store/store.js';

// "Pause X changed" wake-ups for long-polls. Every transition commits, then
// signals here; on PostgreSQL the transition also sends NOTIFY inside its
// transaction, so waiters on every instance hear of it the moment it commits.
// A wake-up is only a hint: waiters re-read the database, and re-check at
// least once a second in case one was missed.

export const PAUSE_CHANNEL = 'pausepoint_pause';
const ANY_CHANGE = Symbol('any change');

export class PauseSignals {
  private readonly emitter = new EventEmitter().setMaxListeners(0);
  private listener: pg.Client | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly store: Store,
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    if (this.store.config.kind === 'postgres') await this.listen(this.store.config.url);
  }

  /** Wakes local waiters of these pauses (and whoever listens for any change). */
  changed(pauseIds: Iterable<string>): void {
    for (const id of pauseIds) this.emitter.emit(id);
    this.emitter.emit(ANY_CHANGE);
  }

  /** Calls `listener` after any pause changed, here or (on PostgreSQL) on another instance. */
  onAnyChange(listener: () => void): void {
    this.emitter.on(ANY_CHANGE, listener);
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
    const client = new pg.Client({ connectionString: url });
    client.on('notification', (message) => {
      if (message.payload) this.changed([message.payload]);
    });
    client.on('error', (error) => {
      this.logger.warn({ err: error }, 'pause signal listener lost its connection; reconnecting');
      this.reconnect(url, client);
    });
    await client.connect();
    await client.query(`listen ${PAUSE_CHANNEL}`);
    this.listener = client;
  }

  private reconnect(url: string, failed: pg.Client): void {
    if (this.closed || this.listener !== failed) return;
    this.listener = undefined;
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
