import { type Kysely, sql } from 'kysely';
import type { Database } from './schema.js';
import type { Store } from './store.js';
import { KEYS_CHANNEL, PAUSE_CHANNEL, QUEUED_CHANNEL } from './wake-up-channels.js';

// What a committed write wakes: the waiters of the pauses it changed (long
// polls, the events feed), the outbox workers when it queued deliveries or
// notifications, and the API-key caches when it rotated a key. The write that
// causes a wake-up announces it here, in one call, which registers both halves:
//   - on PostgreSQL a NOTIFY in its transaction, sent by the server when (and
//     only if) it commits: every instance LISTENs (src/signals.ts);
//   - this instance's wake-up, emitted on `store.wakeUps` after the commit
//     (after-commit.ts), so that SQLite, and PostgreSQL before its NOTIFY
//     comes back, wake at once rather than at the next re-check or poll.
// Nobody above the store signals a change: they subscribe to `store.wakeUps`.
// A wake-up is only a hint: whoever wakes re-reads the database.

/** Listeners of one kind of wake-up. */
export class WakeUpListeners<Args extends unknown[]> {
  private readonly listeners = new Set<(...args: Args) => void>();

  /** Calls `listener` on each wake-up until the returned function is called. */
  on(listener: (...args: Args) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(...args: Args): void {
    for (const listener of this.listeners) listener(...args);
  }
}

/**
 * The wake-ups of this process: of its own commits, and (relayed by the
 * PostgreSQL listener in src/signals.ts) of every instance's.
 */
export class WakeUps {
  /** These pauses changed: a new state, or a new event (a vote). */
  readonly pausesChanged = new WakeUpListeners<[pauseIds: readonly string[]]>();
  /** Webhook deliveries or notifications were queued: the outbox workers should look now. */
  readonly workQueued = new WakeUpListeners<[]>();
  /** A developer's API keys changed: caches must forget them. */
  readonly keysRotated = new WakeUpListeners<[developerId: string]>();
}

// Each takes the write's transaction, never a default: announced on another
// connection, a NOTIFY would go out before the commit, and the wake-up too.
// `store.db` says the statement before has committed on its own.

/** The pauses changed in this write wake their waiters, on every instance, once it commits. */
export async function announcePausesChanged(
  store: Store,
  pauseIds: readonly string[],
  trx: Kysely<Database>,
): Promise<void> {
  if (pauseIds.length === 0) return;
  if (store.dialect === 'postgres') {
    // One round trip for the whole batch: the expirer announces 500 at a time.
    await sql`select pg_notify(${PAUSE_CHANNEL}, id) from unnest(${pauseIds}::text[]) as id`.execute(trx);
  }
  store.afterCommit(trx, () => store.wakeUps.pausesChanged.emit(pauseIds));
}

/** This write queued deliveries or notifications: the workers of every instance look once it commits. */
export async function announceWorkQueued(store: Store, trx: Kysely<Database>): Promise<void> {
  if (store.dialect === 'postgres') await sql`select pg_notify(${QUEUED_CHANNEL}, '')`.execute(trx);
  store.afterCommit(trx, () => store.wakeUps.workQueued.emit());
}

/** This write changed a developer's API keys: every instance's caches forget them once it commits. */
export async function announceKeysRotated(store: Store, developerId: string, trx: Kysely<Database>): Promise<void> {
  if (store.dialect === 'postgres') await sql`select pg_notify(${KEYS_CHANNEL}, ${developerId})`.execute(trx);
  store.afterCommit(trx, () => store.wakeUps.keysRotated.emit(developerId));
}
