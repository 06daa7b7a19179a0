import { type Kysely, sql, type Transaction } from 'kysely';
import type { AfterCommit, AfterCommitHooks } from './after-commit.js';
import type { Database } from './schema.js';

// Group commit for SQLite. Its one connection runs one transaction at a time,
// and a commit costs more than the small writes it seals: every page it
// touched (the table's and each index's) is appended to the WAL again. So
// writes that arrive in the same turn of the event loop share one
// transaction. Should one of them fail, the transaction is rolled back and the
// group runs again with each write in a savepoint of its own: the failing one
// is rolled back alone and gets its error; the others commit together. (Two
// savepoint statements per write cost about as much as the write, and writes
// rarely fail, so they are paid only then.) A work may therefore run twice:
// it must only use the database. Nobody hears of success before the COMMIT,
// and each write's after-commit hooks (after-commit.ts) run after it: those
// of a write rolled back to its savepoint never run.

export type Work<T> = (trx: Transaction<Database>) => Promise<T>;

interface Queued {
  work: Work<unknown>;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/** At most this many writes share a commit. */
const MAX_GROUP = 64;

export function groupCommitter(db: Kysely<Database>, afterCommit: AfterCommitHooks): <T>(work: Work<T>) => Promise<T> {
  let queue: Queued[] = [];
  /** While a group commits, the next one gathers; the running flush takes it. */
  let flushing = false;

  async function commitGroup(group: Queued[]): Promise<void> {
    if (group.length === 1) {
      const [only] = group as [Queued];
      await db
        .transaction()
        .execute((trx) => afterCommit.collect(trx, only.work))
        .then(({ value, hooks }) => {
          afterCommit.run(hooks);
          only.resolve(value);
        }, only.reject);
      return;
    }
    let values: unknown[];
    const hooks: AfterCommit[] = [];
    try {
      values = await db.transaction().execute(async (trx) => {
        const results: unknown[] = [];
        for (const { work } of group) {
          const done = await afterCommit.collect(trx, work);
          results.push(done.value);
          hooks.push(...done.hooks);
        }
        return results;
      });
    } catch {
      // Something failed and nothing was committed: run the group again, each
      // write in its own savepoint, so only the failing one fails.
      await commitEachInSavepoint(group);
      return;
    }
    afterCommit.run(hooks);
    group.forEach(({ resolve }, index) => {
      resolve(values[index]);
    });
  }

  async function commitEachInSavepoint(group: Queued[]): Promise<void> {
    const outcomes: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = [];
    const hooks: AfterCommit[] = [];
    try {
      await db.transaction().execute(async (trx) => {
        for (const { work } of group) {
          await sql`savepoint grouped_write`.execute(trx);
          try {
            const done = await afterCommit.collect(trx, work);
            outcomes.push({ ok: true, value: done.value });
            hooks.push(...done.hooks);
          } catch (error) {
            await rollbackToSavepoint(trx, error);
            outcomes.push({ ok: false, error });
          }
          await sql`release grouped_write`.execute(trx);
        }
      });
    } catch (error) {
      for (const { reject } of group) reject(error);
      return;
    }
    afterCommit.run(hooks);
    group.forEach(({ resolve, reject }, index) => {
      const outcome = outcomes[index];
      if (outcome?.ok) resolve(outcome.value);
      else reject(outcome?.error);
    });
  }

  async function flush(): Promise<void> {
    try {
      while (queue.length > 0) {
        const group = queue.slice(0, MAX_GROUP);
        queue = queue.slice(group.length);
        await commitGroup(group);
      }
    } finally {
      flushing = false;
    }
  }

  return <T>(work: Work<T>) =>
    new Promise<T>((resolve, reject) => {
      queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
      if (flushing) return;
      flushing = true;
      setImmediate(flush);
    });
}

/**
 * Undoes one write. Should SQLite have rolled the whole transaction back on
 * its own (a full disk, an I/O error), the savepoint is gone with it: then
 * the write's own error, which says what went wrong, fails the whole group.
 */
async function rollbackToSavepoint(trx: Transaction<Database>, writeError: unknown): Promise<void> {
  try {
    await sql`rollback to grouped_write`.execute(trx);
  } catch {
    throw writeError;
  }
}
