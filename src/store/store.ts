import { performance } from 'node:perf_hooks';
import { DEFAULT_MIGRATION_LOCK_TABLE, Kysely, MIGRATION_LOCK_ID, Migrator, PostgresDialect, sql } from 'kysely';
import type { DatabaseConfig } from '../config.js';
import { type AfterCommit, AfterCommitHooks } from './after-commit.js';
import { groupCommitter, type Work } from './group-commit.js';
import { migrations } from './migrations/index.js';
import { isStalePlan, prepareNamedStatements } from './named-statements.js';
import type { Database } from './schema.js';
import { RollbackSafeSqliteDialect, sqliteDialect } from './sqlite.js';
import { WakeUps } from './wake-ups.js';
import { trackWrites, WriteHealth } from './write-health.js';

export type Dialect = 'sqlite' | 'postgres';

// Which writes share a commit, and which have a transaction of their own.
//
// store.write(): the writes on the paths that carry the load, many small ones
// at once: creating a pause, answering it, a vote, a cancel, the expirer's
// batches, a reminder or escalation, a webhook's creation under its cap, the
// search index's batches. On SQLite those arriving in the same turn of the
// event loop share one transaction and one COMMIT (group-commit.ts), which
// costs more than the small writes it seals; on PostgreSQL each has its own.
// A grouped write may run twice (after a rollback) and waits for the others
// of its group, so it only uses the database and stays short.
//
// store.transaction(): a transaction of its own on both engines, for what
// must not wait for or be rolled back with others' writes: the workers'
// claims (PostgreSQL's FOR UPDATE SKIP LOCKED; on SQLite a read before the
// write), and the rare writes whose errors are expected and handled by their
// caller (an email already registered, a billing event already applied), or
// that are too rare to gain from sharing (key rotation, sessions).
//
// Both run the after-commit hooks (after-commit.ts) their write registered,
// once it commits: that is how a write wakes waiters and workers
// (wake-ups.ts), never by its caller. On PostgreSQL both run their work a
// second time after meeting a prepared plan a migration made stale
// (named-statements.ts), so the work of either only uses the database.

/** The database behind the service: one Kysely handle whichever engine runs it. */
export interface Store {
  db: Kysely<Database>;
  /**
   * SQLite: the rows of a read-only statement outside a transaction, read at
   * once (sqlite.ts); undefined where Kysely must run it. For prepared.ts.
   */
  readNow?: ((sql: string, parameters: readonly unknown[]) => unknown[] | undefined) | undefined;
  dialect: Dialect;
  /** The connection string, for the PostgreSQL listener that needs its own connection. */
  config: DatabaseConfig;
  /**
   * Runs `work` in a transaction. On SQLite, writes that arrive together
   * share one commit (group-commit.ts); on PostgreSQL each has its own, and
   * the server groups the flushes of concurrent commits itself. `work` must
   * only use the database: on SQLite the writes grouped with it wait for it,
   * and it runs a second time (after a rollback) when one of them fails; on
   * PostgreSQL, when it met a prepared plan a migration made stale.
   */
  write<T>(work: Work<T>): Promise<T>;
  /**
   * Runs `work` in a transaction of its own, on both engines; then its
   * after-commit hooks. `work` must only use the database: on PostgreSQL it
   * runs a second time when it met a prepared plan a migration made stale.
   */
  transaction<T>(work: Work<T>): Promise<T>;
  /**
   * Runs `hook` after the write running in `trx` commits (at once when `trx`
   * is the store's handle, outside a transaction). Used by wake-ups.ts.
   */
  afterCommit(trx: Kysely<Database>, hook: AfterCommit): void;
  /** This process's wake-ups of committed writes (wake-ups.ts). */
  wakeUps: WakeUps;
  ping(): Promise<void>;
  /**
   * Why the database refuses writes (a full disk, read-only), as the last
   * write found; undefined while writes commit. While writes are failing and
   * none has been tried for a while, this tries one, so that the service
   * notices the database is back even when nothing else writes.
   */
  writeFailure(): Promise<string | undefined>;
  close(): Promise<void>;
}

/** How long writes must have been failing quietly before a health check tries one itself, and how often. */
const WRITE_PROBE_INTERVAL_MS = 5000;

export interface StoreOptions {
  /** Hears of an after-commit hook (a wake-up) that threw; by default a process warning. */
  afterCommitFailed?: (error: unknown) => void;
}

const warnOfFailedHook = (error: unknown) =>
  process.emitWarning(`an after-commit hook failed: ${error instanceof Error ? error.message : String(error)}`);

export function openStore(config: DatabaseConfig, options: StoreOptions = {}): Store {
  const writeHealth = new WriteHealth();
  const dialect = config.kind === 'sqlite' ? sqliteDialect(config.path) : postgresDialect(config);
  const sqlite = dialect instanceof RollbackSafeSqliteDialect ? dialect : undefined;
  const db = new Kysely<Database>({ dialect: trackWrites(dialect, writeHealth) });
  let closed: Promise<void> | undefined;
  let probe: Promise<unknown> | undefined;
  let probedAt = Number.NEGATIVE_INFINITY;
  const hooks = new AfterCommitHooks(options.afterCommitFailed ?? warnOfFailedHook);
  const transactionOnce = async <T>(work: Work<T>): Promise<T> => {
    const done = await db.transaction().execute((trx) => hooks.collect(trx, work));
    hooks.run(done.hooks);
    return done.value;
  };
  // On PostgreSQL a transaction that met a prepared plan a migration made
  // stale (named-statements.ts) runs again: its work only uses the database.
  const transaction = <T>(work: Work<T>): Promise<T> =>
    transactionOnce(work).catch((error: unknown) => {
      if (!isStalePlan(error)) throw error;
      return transactionOnce(work);
    });
  const grouped = config.kind === 'sqlite' ? groupCommitter(db, hooks) : undefined;
  return {
    db,
    readNow: sqlite && ((text, parameters) => sqlite.readNow(text, parameters)),
    dialect: config.kind,
    config,
    write: grouped ?? transaction,
    transaction,
    afterCommit: (trx, hook) => hooks.add(trx, hook),
    wakeUps: new WakeUps(),
    async ping() {
      await sql`select 1`.execute(db);
    },
    async writeFailure() {
      const due = performance.now() - probedAt >= WRITE_PROBE_INTERVAL_MS;
      if (writeHealth.failure && writeHealth.quietForMs >= WRITE_PROBE_INTERVAL_MS && due && !probe) {
        probedAt = performance.now();
        // Its outcome reaches writeHealth like any write's.
        probe = probeWrite(db)
          .catch(() => {})
          .finally(() => {
            probe = undefined;
          });
      }
      await probe;
      return writeHealth.failure;
    },
    close() {
      closed ??= db.destroy();
      return closed;
    },
  };
}

/**
 * The smallest write that must reach the disk: it rewrites the one row of
 * Kysely's migration-lock table as it is. No migration reads that value on
 * these engines: PostgreSQL's lock is an advisory lock, SQLite needs none.
 */
async function probeWrite(db: Kysely<Database>): Promise<void> {
  await sql`update ${sql.table(DEFAULT_MIGRATION_LOCK_TABLE)} set is_locked = is_locked where id = ${MIGRATION_LOCK_ID}`.execute(
    db,
  );
}

function postgresDialect({ url, preparedStatements }: { url: string; preparedStatements: boolean }) {
  return new PostgresDialect({
    // The driver is loaded only when PostgreSQL is used; SQLite never needs it.
    pool: async () => {
      const { default: pg } = await import('pg');
      const pool = new pg.Pool({ connectionString: url, max: 10, connectionTimeoutMillis: 5000 });
      // A client's error (the server restarting, the database dropped) must not
      // crash the process; the next query reports it. The pool hears its idle
      // clients; a client checked out between two statements (a transaction's)
      // emits to itself, so each client gets a listener too.
      pool.on('error', () => {});
      pool.on('connect', (client) => {
        client.on('error', () => {});
        if (preparedStatements) prepareNamedStatements(client);
      });
      return pool;
    },
  });
}

/**
 * Applies every pending migration; safe to run from several instances at once.
 * On PostgreSQL Kysely holds an advisory lock and runs each migration in a
 * transaction. On SQLite it does neither, so the whole run happens inside one
 * BEGIN IMMEDIATE transaction: a second process waits (busy_timeout), then
 * finds the migrations recorded, and a crash mid-run leaves nothing half-built.
 */
export async function migrateToLatest(store: Store): Promise<string[]> {
  const migrate = async (db: Kysely<Database>) => {
    const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
    const { error, results } = await migrator.migrateToLatest();
    if (error) throw error;
    return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
  };
  if (store.dialect !== 'sqlite') return migrate(store.db);
  return store.db.connection().execute(async (connection) => {
    await sql`begin immediate`.execute(connection);
    try {
      const applied = await migrate(connection);
      await sql`commit`.execute(connection);
      return applied;
    } catch (error) {
      // SQLite may have rolled back already (a full disk): then this ROLLBACK
      // fails, and the error that says what went wrong is the one to report.
      await sql`rollback`.execute(connection).catch(() => {});
      throw error;
    }
  });
}
