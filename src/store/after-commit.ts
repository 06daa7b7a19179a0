import type { Kysely, Transaction } from 'kysely';
import type { Database } from './schema.js';

// What a write must do once it has committed (wake this instance's waiters
// and workers, see wake-ups.ts) is registered by the write itself, on the
// transaction it runs in, and run by whoever commits that transaction: the
// store's write() or transaction(). A write that fails, or is rolled back to
// its savepoint by group commit, loses its hooks with its changes.
//
// Group commit (group-commit.ts) runs several writes in one transaction, one
// after the other: each gets a list of its own for the time it runs, so a
// rolled-back write's hooks go and the others' run after the shared COMMIT.

export type AfterCommit = () => void;

export class AfterCommitHooks {
  /** The hooks of the write running in each open transaction. */
  private readonly open = new WeakMap<Kysely<Database>, AfterCommit[]>();

  /**
   * `failed` hears of a hook that threw. The write has committed by then, so
   * its caller still gets its value, and the writes after it still run.
   */
  constructor(private readonly failed: (error: unknown) => void) {}

  /**
   * Runs `hook` once the write running in `db` commits; at once when `db` is
   * no transaction (the statement before has committed on its own).
   */
  add(db: Kysely<Database>, hook: AfterCommit): void {
    const hooks = this.open.get(db);
    if (hooks) hooks.push(hook);
    else if (db.isTransaction) {
      throw new Error('an after-commit hook needs a transaction opened by store.write() or store.transaction()');
    } else this.run([hook]);
  }

  /** Runs one write in `trx` and answers its value and the hooks it registered, to run after the commit. */
  async collect<T>(trx: Transaction<Database>, work: (trx: Transaction<Database>) => Promise<T>) {
    const hooks: AfterCommit[] = [];
    this.open.set(trx, hooks);
    try {
      return { value: await work(trx), hooks };
    } finally {
      this.open.delete(trx);
    }
  }

  /** Runs the hooks of committed writes, each apart: one that throws stops neither the others nor the write. */
  run(hooks: AfterCommit[]): void {
    for (const hook of hooks) {
      try {
        hook();
      } catch (error) {
        this.failed(error);
      }
    }
  }
}
