import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { Worker } from 'node:worker_threads';
import SqliteDatabase from 'better-sqlite3';
import {
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  SqliteDialect,
  type SqliteDatabase as SqliteDialectDatabase,
  type SqliteStatement,
} from 'kysely';

// The embedded default: one better-sqlite3 connection in WAL mode, with its
// statements kept prepared and its checkpoints moved off the event loop.

/** How many distinct statements stay prepared; the service issues far fewer. */
const STATEMENT_CACHE_SIZE = 256;
/** How often the checkpointer copies committed WAL frames into the database file. */
const CHECKPOINT_INTERVAL_MS = 250;
/** A WAL this long (in 4 KiB pages, so 64 MiB) is checkpointed even if writers must wait. */
const WAL_RESTART_PAGES = 16_384;
const WAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;

export function sqliteDialect(path: string): RollbackSafeSqliteDialect {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const database = new SqliteDatabase(path);
  // WAL lets readers run beside the one writer and survives a killed process;
  // synchronous=NORMAL is durable across process crashes (an OS crash may lose
  // the last transactions). busy_timeout lets a worker process share the file.
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = NORMAL');
  database.pragma('busy_timeout = 5000');
  database.pragma('foreign_keys = ON');
  database.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
  const checkpointer = path === ':memory:' ? undefined : startCheckpointer(database, path);
  const statements = withStatementCache(database, () => database.close());
  return new RollbackSafeSqliteDialect(
    database,
    statements,
    // The thread's connection closes first, and then this one, the last,
    // which removes the WAL and shared-memory files: two connections closing
    // at the same moment each find the other still open, and neither does.
    // So nothing holds or leaves the files once closing the store resolves.
    () => checkpointer?.stop() ?? Promise.resolve(),
  );
}

/**
 * Transactions begin IMMEDIATE: every transaction here writes, and one begun
 * deferred that reads before it writes (a vote reads its pause first) reads a
 * snapshot that a commit of another connection (a worker process, or the
 * checkpointer's RESTART) can make stale; its first write then fails at once
 * with SQLITE_BUSY, busy_timeout or not. Taking the write lock at BEGIN waits
 * for the other writer instead.
 *
 * On some errors (SQLITE_FULL, SQLITE_IOERR, SQLITE_BUSY, ...) SQLite rolls
 * the whole transaction back by itself. Kysely then sends ROLLBACK anyway, which
 * fails with "cannot rollback - no transaction is active", and that error, not
 * the one that said what went wrong, is what reaches the caller and the log.
 * So ROLLBACK is only sent while a transaction is still open.
 */
export class RollbackSafeSqliteDialect extends SqliteDialect {
  readonly #database: SqliteDatabase.Database;
  readonly #statements: CachedStatements;
  readonly #beforeDestroy: () => Promise<void>;

  constructor(database: SqliteDatabase.Database, statements: CachedStatements, beforeDestroy: () => Promise<void>) {
    super({ database: statements });
    this.#database = database;
    this.#statements = statements;
    this.#beforeDestroy = beforeDestroy;
  }

  /**
   * The rows of a read-only statement run at once on the connection, or
   * undefined (the caller goes through Kysely) for a statement that writes or
   * while a transaction is open. better-sqlite3 runs a statement to its end
   * synchronously, so outside a transaction the connection has nothing of
   * anyone else's in progress, and the read sees what is committed, as it
   * would through Kysely; inside one it would see uncommitted writes, and it
   * waits for Kysely's lock instead. It spares a hot read Kysely's promise
   * chain and lock around the connection.
   */
  readNow(sql: string, parameters: readonly unknown[]): unknown[] | undefined {
    if (this.#database.inTransaction) return undefined;
    const statement = this.#statements.prepare(sql);
    return statement.readonly ? (statement.all(parameters) as unknown[]) : undefined;
  }

  override createDriver(): Driver {
    const driver = super.createDriver();
    driver.beginTransaction = async (connection: DatabaseConnection) => {
      await connection.executeQuery(CompiledQuery.raw('begin immediate'));
    };
    const rollback = driver.rollbackTransaction.bind(driver);
    driver.rollbackTransaction = async (connection: DatabaseConnection) => {
      if (this.#database.inTransaction) await rollback(connection);
    };
    const destroy = driver.destroy.bind(driver);
    driver.destroy = async () => {
      await this.#beforeDestroy();
      await destroy();
    };
    return driver;
  }
}

/** Kysely's statement, and whether it only reads (better-sqlite3's `readonly`: no RETURNING write). */
type CachedStatement = SqliteStatement & { readonly: boolean };
type CachedStatements = Omit<SqliteDialectDatabase, 'prepare'> & { prepare(sql: string): CachedStatement };

/**
 * Kysely's SQLite driver prepares every query afresh, which costs as much as
 * running a small one. The service sends the same few statement texts over and
 * over, so each is prepared once and kept. Safe because no two queries use a
 * statement at the same time: Kysely runs them one at a time under a mutex,
 * and readNow runs its read to the end synchronously, between them.
 */
function withStatementCache(database: SqliteDatabase.Database, close: () => void): CachedStatements {
  const prepared = new Map<string, CachedStatement>();
  return {
    close,
    prepare(text) {
      let statement = prepared.get(text);
      if (!statement) {
        statement = rowsAsObjects(database.prepare(text));
        // Oldest first out: a Map iterates in insertion order.
        if (prepared.size >= STATEMENT_CACHE_SIZE) prepared.delete(prepared.keys().next().value as string);
        prepared.set(text, statement);
      }
      return statement;
    },
  };
}

/**
 * A reading statement whose rows are fetched as arrays and made into objects
 * here. better-sqlite3 builds each row object through V8's C++ API, one
 * property at a time, which costs more than SQLite's own lookup: a pause's 27
 * columns took about 18 µs that way, 12 µs this way. The objects are the same
 * (a repeated column name keeps its last value, as there).
 */
function rowsAsObjects(statement: SqliteDatabase.Statement): CachedStatement {
  if (!statement.reader) return statement;
  const columns = statement.columns().map((column) => column.name);
  // Setting __proto__ would set the prototype, not a column: such a statement keeps better-sqlite3's objects.
  if (columns.includes('__proto__')) return statement;
  const rows = statement.raw(true);
  const objectOf = (values: unknown[]) => {
    const row: Record<string, unknown> = {};
    for (let i = 0; i < columns.length; i++) row[columns[i]!] = values[i];
    return row;
  };
  return {
    reader: true,
    readonly: statement.readonly,
    all: (parameters) => (rows.all(parameters) as unknown[][]).map(objectOf),
    run: (parameters) => rows.run(parameters),
    *iterate(parameters) {
      for (const values of rows.iterate(parameters) as IterableIterator<unknown[]>) yield objectOf(values);
    },
  };
}

/**
 * A commit in WAL mode with synchronous=NORMAL only appends to the WAL; the
 * fsyncs happen at checkpoints, which SQLite runs by default in the committing
 * connection, here the event loop, stalling every request behind them. So the
 * service's connection never checkpoints, and a worker thread with its own
 * connection does, PASSIVE (never blocking a writer) every 250 ms. Should
 * steady writing keep the WAL from ever being reset, a RESTART checkpoint at
 * 64 MiB bounds it: writers wait for that one. Durability is unchanged; a
 * crash leaves committed frames in the WAL, and the next open recovers them.
 */
function startCheckpointer(database: SqliteDatabase.Database, path: string): { stop(): Promise<void> } {
  database.pragma('wal_autocheckpoint = 0');
  const worker = new Worker(CHECKPOINTER_SOURCE, {
    eval: true,
    // It allocates next to nothing; V8's default young generation would still reserve megabytes of RSS.
    resourceLimits: { maxYoungGenerationSizeMb: 1, maxOldGenerationSizeMb: 16 },
    workerData: {
      driver: createRequire(import.meta.url).resolve('better-sqlite3'),
      path,
      intervalMs: CHECKPOINT_INTERVAL_MS,
      restartPages: WAL_RESTART_PAGES,
      sizeLimitBytes: WAL_SIZE_LIMIT_BYTES,
    },
  });
  worker.unref(); // never what keeps a process alive
  // A failing checkpoint is retried on the next tick; whatever broke it (a
  // full disk, say) fails the service's own writes too, and they are logged.
  // Should the thread itself die, the connection checkpoints again as SQLite
  // does by default, so the WAL stays bounded.
  let stopping = false;
  const exited = new Promise<void>((resolve) => {
    worker.on('exit', () => {
      if (!stopping && database.open) database.pragma('wal_autocheckpoint = 1000');
      resolve();
    });
  });
  worker.on('error', () => {});
  return {
    /** Asks the thread to close its connection; resolves once it has exited. */
    stop: () => {
      stopping = true;
      // Held again until it exits: a process closing its store must not end
      // while the thread still closes its connection (nor before the caller
      // waiting on that hears of it).
      worker.ref();
      worker.postMessage('stop');
      return exited;
    },
  };
}

// Plain CommonJS, run by the worker thread as is (eval), so that it works the
// same from dist/ and from the TypeScript sources under test.
const CHECKPOINTER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
// Opened at the first checkpoint, not at start: a store closed before then
// (a thread slow to start on a busy machine) must not have its files opened
// again after its own connection has closed and removed them.
let db;
let timer;
function checkpoint() {
  try {
    if (!db) {
      db = new Database(workerData.path);
      db.pragma('busy_timeout = 5000');
      db.pragma('journal_size_limit = ' + workerData.sizeLimitBytes);
    }
    const [wal] = db.pragma('wal_checkpoint(PASSIVE)');
    if (wal && wal.log > workerData.restartPages) db.pragma('wal_checkpoint(RESTART)');
  } catch {}
  timer = setTimeout(checkpoint, workerData.intervalMs);
}
parentPort.on('message', (message) => {
  if (message !== 'stop') return;
  clearTimeout(timer);
  db?.close();
  parentPort.close();
});
timer = setTimeout(checkpoint, workerData.intervalMs);
`;
