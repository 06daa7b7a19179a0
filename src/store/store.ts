import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import {
  Kysely,
  Migrator,
  PostgresDialect,
  SqliteDialect,
  type SqliteDatabase as SqliteDialectDatabase,
  sql,
} from 'kysely';
import type { DatabaseConfig } from '../config.js';
import { migrations } from './migrations/index.js';
import type { Database } from './schema.js';

export type Dialect = 'sqlite' | 'postgres';

/** The database behind the service: one Kysely handle whichever engine runs it. */
export interface Store {
  db: Kysely<Database>;
  dialect: Dialect;
  /** The connection string, for the PostgreSQL listener that needs its own connection. */
  config: DatabaseConfig;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export function openStore(config: DatabaseConfig): Store {
  const db = new Kysely<Database>({
    dialect: config.kind === 'sqlite' ? sqliteDialect(config.path) : postgresDialect(config.url),
  });
  let closed: Promise<void> | undefined;
  return {
    db,
    dialect: config.kind,
    config,
    async ping() {
      await sql`select 1`.execute(db);
    },
    close() {
      closed ??= db.destroy();
      return closed;
    },
  };
}

function sqliteDialect(path: string): SqliteDialect {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const database = new SqliteDatabase(path);
  // WAL lets readers run beside the one writer and survives a killed process;
  // synchronous=NORMAL is durable across process crashes (an OS crash may lose
  // the last transactions). busy_timeout lets a worker process share the file.
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = NORMAL');
  database.pragma('busy_timeout = 5000');
  database.pragma('foreign_keys = ON');
  return new SqliteDialect({ database: withStatementCache(database) });
}

/** How many distinct statements stay prepared; the service issues far fewer. */
const STATEMENT_CACHE_SIZE = 256;

/**
 * Kysely's SQLite driver prepares every query afresh, which costs as much as
 * running a small one. The service sends the same few statement texts over and
 * over, so each is prepared once and kept. Safe because Kysely holds the one
 * connection under a mutex: no two queries use a statement at the same time.
 */
function withStatementCache(database: SqliteDatabase.Database): SqliteDialectDatabase {
  const prepared = new Map<string, SqliteDatabase.Statement>();
  return {
    close: () => database.close(),
    prepare(text) {
      let statement = prepared.get(text);
      if (!statement) {
        statement = database.prepare(text);
        // Oldest first out: a Map iterates in insertion order.
        if (prepared.size >= STATEMENT_CACHE_SIZE) prepared.delete(prepared.keys().next().value as string);
        prepared.set(text, statement);
      }
      return statement;
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
      await sql`rollback`.execute(connection);
      throw error;
    }
  });
}
