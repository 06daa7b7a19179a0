import { performance } from 'node:perf_hooks';
import type { CompiledQuery, DatabaseConnection, Dialect, Driver, QueryResult } from 'kysely';

// Whether the database takes writes, as the writes themselves tell: a write
// refused for want of disk or by a read-only or damaged database marks the
// write path as failing, and the next write that commits clears it. /health
// reports it, so a full disk is not a quiet run of 500s while the health check
// still answers 200.

/**
 * Why an error means the database cannot take writes just now, in words safe
 * to show anyone; undefined for errors of the write itself (a constraint, a
 * bad value), which say nothing about the database.
 */
export function storageFailure(error: unknown): string | undefined {
  const code = String((error as { code?: unknown } | null)?.code ?? '');
  // SQLite (better-sqlite3 gives the extended code, e.g. SQLITE_IOERR_WRITE).
  if (code === 'SQLITE_FULL') return 'database or disk is full';
  if (code.startsWith('SQLITE_IOERR')) return 'disk I/O error';
  if (code.startsWith('SQLITE_READONLY')) return 'the database is read-only';
  if (code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB') return 'the database file is damaged';
  if (code.startsWith('SQLITE_CANTOPEN')) return 'the database file cannot be opened';
  // PostgreSQL SQLSTATEs.
  if (code === '53100') return 'database or disk is full';
  if (code.startsWith('53')) return 'the database server is out of resources';
  if (code.startsWith('58')) return 'the database server reports a system error';
  if (code === '25006') return 'the database is read-only';
  if (code.startsWith('XX')) return 'the database reports an internal error or damage';
  // A lock held past busy_timeout (SQLITE_BUSY: a backup, a migration in
  // another process) is not counted: it passes, and a 503 for it could get a
  // healthy instance restarted. Nor is a lost connection: the pool replaces
  // it, and a database that cannot be reached at all fails the health
  // check's own query.
  return undefined;
}

/** The write path's state: the last write's outcome, and when it came. */
export class WriteHealth {
  #failure: string | undefined;
  #lastOutcomeAt = Number.NEGATIVE_INFINITY;

  /** Why writes are failing, or undefined while they commit. */
  get failure(): string | undefined {
    return this.#failure;
  }

  /** Milliseconds since a write last succeeded or failed. */
  get quietForMs(): number {
    return performance.now() - this.#lastOutcomeAt;
  }

  committed(): void {
    this.#failure = undefined;
    this.#lastOutcomeAt = performance.now();
  }

  refused(reason: string): void {
    this.#failure = reason;
    this.#lastOutcomeAt = performance.now();
  }
}

type Statement = 'begin' | 'commit' | 'rollback' | 'change' | 'read' | 'other';

const CHANGE_NODES = new Set(['InsertQueryNode', 'UpdateQueryNode', 'DeleteQueryNode', 'MergeQueryNode']);

/**
 * What raw SQL texts are, by text: prepared queries (prepared.ts) and
 * transactions' BEGIN and COMMIT are raw, so the hot paths would otherwise
 * run these patterns on every statement. Bounded, for raw texts built with
 * values in them.
 */
const rawStatements = new Map<string, Statement>();
const RAW_STATEMENTS_KEPT = 1024;

function statementOf(query: CompiledQuery): Statement {
  const kind = query.query.kind;
  if (CHANGE_NODES.has(kind)) return 'change';
  if (kind === 'SelectQueryNode') return 'read';
  if (kind !== 'RawNode') return 'other';
  let statement = rawStatements.get(query.sql);
  if (statement === undefined) {
    statement = rawStatementOf(query.sql);
    if (rawStatements.size < RAW_STATEMENTS_KEPT) rawStatements.set(query.sql, statement);
  }
  return statement;
}

function rawStatementOf(sql: string): Statement {
  const text = sql.trimStart().slice(0, 24).toLowerCase();
  if (/^(begin|start transaction)\b/.test(text)) return 'begin';
  if (/^(commit|end)\b/.test(text)) return 'commit';
  if (/^rollback\s*;?\s*$/.test(text)) return 'rollback'; // not "rollback to <savepoint>"
  if (/^(insert|update|delete|replace|merge)\b/.test(text)) return 'change';
  if (/^select\b/.test(text)) return 'read';
  return 'other';
}

/** True when a statement changed rows (or returned the rows it changed). */
const changedRows = (result: QueryResult<unknown>) => (result.numAffectedRows ?? 0n) > 0n || result.rows.length > 0;

/**
 * Wraps a dialect so that every connection it opens reports to `health`: a
 * storage failure of any statement but a read marks writes as failing; a
 * change that commits (a COMMIT after it, or on its own outside a
 * transaction) clears that. A transaction that changed nothing says nothing,
 * since committing nothing succeeds even on a full disk.
 */
export function trackWrites(dialect: Dialect, health: WriteHealth): Dialect {
  return {
    createAdapter: () => dialect.createAdapter(),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createIntrospector: (db) => dialect.createIntrospector(db),
    createDriver: () => trackingDriver(dialect.createDriver(), health),
  };
}

/** What one connection's current transaction has done. */
interface TransactionState {
  open: boolean;
  changed: boolean;
}

function trackingDriver(driver: Driver, health: WriteHealth): Driver {
  const states = new WeakMap<DatabaseConnection, TransactionState>();
  const acquire = driver.acquireConnection.bind(driver);
  driver.acquireConnection = async () => {
    const connection = await acquire();
    if (!states.has(connection)) states.set(connection, track(connection, health));
    return connection;
  };
  // However it ends (SQLite may have rolled back by itself, and then no
  // ROLLBACK is sent), a rolled-back transaction committed nothing.
  const rollback = driver.rollbackTransaction.bind(driver);
  driver.rollbackTransaction = async (connection) => {
    try {
      await rollback(connection);
    } finally {
      const state = states.get(connection);
      if (state) Object.assign(state, { open: false, changed: false });
    }
  };
  return driver;
}

// The connection's own method is replaced (as Kysely does for its query log):
// drivers reach their connections' private state, so a wrapper object would
// not do.
function track(connection: DatabaseConnection, health: WriteHealth): TransactionState {
  const execute = connection.executeQuery.bind(connection);
  const state: TransactionState = { open: false, changed: false };
  connection.executeQuery = async <R>(query: CompiledQuery) => {
    const statement = statementOf(query);
    let result: QueryResult<R>;
    try {
      result = await execute<R>(query);
    } catch (error) {
      const reason = statement === 'read' ? undefined : storageFailure(error);
      if (reason) health.refused(reason);
      if (statement === 'rollback') Object.assign(state, { open: false, changed: false });
      throw error;
    }
    switch (statement) {
      case 'begin':
        Object.assign(state, { open: true, changed: false });
        break;
      case 'change':
        if (!changedRows(result)) break;
        if (state.open) state.changed = true;
        else health.committed();
        break;
      case 'commit': {
        // PostgreSQL answers COMMIT of a failed transaction with ROLLBACK.
        const rolledBack = (result.rows[0] as { command?: string } | undefined)?.command === 'ROLLBACK';
        if (state.changed && !rolledBack) health.committed();
        Object.assign(state, { open: false, changed: false });
        break;
      }
      case 'rollback':
        Object.assign(state, { open: false, changed: false });
        break;
    }
    return result;
  };
  return state;
}
