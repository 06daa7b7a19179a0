import { sql } from 'kysely';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { migrateToLatest, openStore, type Store } from '../../src/store/store.js';
import { announcePausesChanged, announceWorkQueued } from '../../src/store/wake-ups.js';

// A write's after-commit hooks, and so its wake-ups (store/wake-ups.ts),
// run once its transaction commits: grouped writes after their shared
// COMMIT, a write rolled back to its savepoint never. Over a real, migrated
// SQLite store (in memory; group commit is SQLite's).

let store: Store;

beforeEach(async () => {
  store = openStore({ kind: 'sqlite', path: ':memory:' });
  await migrateToLatest(store);
});
afterEach(async () => {
  await store.close();
});

it('grouped writes wake after their shared commit; one rolled back to its savepoint wakes nobody', async () => {
  const woken: string[] = [];
  let queued = 0;
  store.wakeUps.pausesChanged.on((ids) => woken.push(...ids));
  store.wakeUps.workQueued.on(() => queued++);
  const failure = new Error('this write fails');
  // Issued in one turn of the event loop: they share a transaction.
  const writes = [
    store.write(async (trx) => {
      await announcePausesChanged(store, ['pause_1'], trx);
      await announceWorkQueued(store, trx);
      expect(woken).toEqual([]); // not before the commit
    }),
    store.write(async (trx) => {
      await announcePausesChanged(store, ['pause_2'], trx);
      await sql`select 1`.execute(trx);
      throw failure;
    }),
    store.write(async (trx) => announcePausesChanged(store, ['pause_3'], trx)),
  ];
  const outcomes = await Promise.allSettled(writes);
  expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
  expect(woken.sort()).toEqual(['pause_1', 'pause_3']);
  expect(queued).toBe(1);
});

it('a wake-up outside a transaction (the statement has committed) is sent at once', async () => {
  let queued = 0;
  store.wakeUps.workQueued.on(() => queued++);
  await announceWorkQueued(store, store.db);
  expect(queued).toBe(1);
});

it('a wake-up that throws stops neither the write, nor the hooks after it, nor the writes after it', async () => {
  const failures: unknown[] = [];
  await store.close();
  store = openStore({ kind: 'sqlite', path: ':memory:' }, { afterCommitFailed: (error) => failures.push(error) });
  await migrateToLatest(store);
  const woken: string[] = [];
  store.wakeUps.pausesChanged.on(() => {
    throw new Error('a listener with a bug');
  });
  store.wakeUps.workQueued.on(() => woken.push('queued'));
  const first = await store.write(async (trx) => {
    await announcePausesChanged(store, ['pause_1'], trx);
    await announceWorkQueued(store, trx);
    return 'committed';
  });
  expect(first).toBe('committed');
  expect(woken).toEqual(['queued']);
  expect(failures).toHaveLength(1);
  // The group committer is not stuck: the next write commits and wakes as well.
  await store.write((trx) => announceWorkQueued(store, trx));
  expect(woken).toEqual(['queued', 'queued']);
});

it('refuses an after-commit hook in a transaction the store did not open', async () => {
  await expect(store.db.transaction().execute((trx) => announceWorkQueued(store, trx))).rejects.toThrow(
    /store\.write\(\) or store\.transaction\(\)/,
  );
});
