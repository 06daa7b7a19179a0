import { Kysely, Migrator, PostgresDialect, sql } from 'kysely';
import type { DatabaseConfig } from '../config.js';
import { groupCommitter, type Work } from './group-commit.js';
import { migrations } from './migrations/index.js';
import type { Database } from './schema.js';
import { sqliteDialect } from './sqlite.js';

export type Dialect = 'sqlite' | 'postgres';

/** The database behind the service: one Kysely handle whichever engine runs it. */
export interface Store {
  db: Kysely<Database>;
  dialect: Dialect;
  /** The connection string, for the PostgreSQL listener that needs its own connection. */
  config: DatabaseConfig;
  /**
   * Runs `work` in a transaction. On SQLite, writes that arrive together
   * share one commit (group-commit.ts); on PostgreSQL each has its own, and
   * the server groups the flushes of concurrent commits itself. `work` must
   * only use the database: on SQLite the writes grouped with it wait for it,
   * and it runs a second time (after a rollback) when one of them fails.
   */
  write<T>(work: Work<T>): Promise<T>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export function openStore(config: DatabaseConfig): Store {
  const db = new Kysely<Database>({
    dialect: config.kind === 'sqlite' ? sqliteDialect(config.path) : postgresDialect(config.url),
  });
  let closed: Promise<void> | undefined;
  const grouped = config.kind === 'sqlite' ? groupCommitter(db) : undefined;
  return {
    db,
    dialect: config.kind,
    config,
    write: (work) => (grouped ? grouped(work) : db.transaction().execute(work)),
    async ping() {
      await sql`select 1`.execute(db);
    },
    close() {
      closed ??= db.destroy();
      return closed;
    },
  };
}

function postgresDialect(url: string): PostgresDialect {
  return new PostgresDialect({
    // The driver is loaded only when PostgreSQL is used; SQLite never needs it.
    pool: async () => {
      const { default: pg } = await import('pg');
      const pool = new pg.Pool({ connectionString: url, max: 10, connectionTimeoutMillis: 5000 });
      // An idle client's error (the server restarting) must not crash the
      // process; the next query reports it.
      pool.on('error', () => {});
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
