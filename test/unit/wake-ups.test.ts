import { sql } from 'kysely';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { insertDeveloper, pendingPauseRow } from '../../bench/lib/pauses.js';
import { systemClock } from '../../src/domain/clock.js';
import { createLogger } from '../../src/logger.js';
import { PauseWaiters } from '../../src/signals.js';
import { migrateToLatest, openStore, type Store } from '../../src/store/store.js';
import { cancelPause, respondToPause } from '../../src/store/transitions.js';
import { announcePausesChanged, announceWorkQueued } from '../../src/store/wake-ups.js';

// A write owns its wake-ups: a transition wakes its pause's waiters once it
// commits, with nobody above the store signalling, and grouped writes wake
// only after their shared commit, a rolled-back one never. The waiters here
// have a re-check of an hour, so whatever wakes them is the wake-up itself.
// Over a real, migrated SQLite store (in memory; group commit is SQLite's).

const HOUR = 3_600_000;
let store: Store;
let waiters: PauseWaiters;

beforeEach(async () => {
  store = openStore({ kind: 'sqlite', path: ':memory:' });
  await migrateToLatest(store);
  await insertDeveloper(store, 'dev_1');
  waiters = new PauseWaiters(store, createLogger('silent'), HOUR);
});
afterEach(async () => {
  waiters.close();
  await store.close();
});

async function addPause(id: string): Promise<void> {
  const owner = { developerId: 'dev_1', mode: 'test' as const, title: 'Ship it?' };
  const expiresAt = new Date(Date.now() + HOUR).toISOString();
  await store.db
    .insertInto('pauses')
    .values(pendingPauseRow({ ...owner, expiresAt }, id, new Date().toISOString()))
    .execute();
}

/** Whether `promise` has settled by the time pending callbacks have run. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(() => {
    done = true;
  });
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

it('an answer wakes its pause’s waiters once it commits, and no one else’s', async () => {
  await addPause('pause_a');
  await addPause('pause_b');
  const a = waiters.waitForPause('pause_a', HOUR);
  const b = waiters.waitForPause('pause_b', HOUR);
  const now = new Date().toISOString();
  expect(await respondToPause(store, { pauseId: 'pause_a', choice: 'approve', text: null, now })).not.toBeNull();
  expect(await settled(a)).toBe(true);
  expect(await settled(b)).toBe(false);
  expect(
    await cancelPause(store, { pauseId: 'pause_b', developerId: 'dev_1', mode: 'test', clock: systemClock }),
  ).not.toBeNull();
  expect(await settled(b)).toBe(true);
  expect(waiters.waiterCount).toBe(0);
});

it('a transition that changes nothing wakes nobody', async () => {
  await addPause('pause_a');
  const a = waiters.waitForPause('pause_a', HOUR);
  const now = new Date().toISOString();
  expect(await respondToPause(store, { pauseId: 'pause_a', choice: 'not an option', text: null, now })).toBeNull();
  expect(await settled(a)).toBe(false);
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
  await announceWorkQueued(store);
  expect(queued).toBe(1);
});

it('refuses an after-commit hook in a transaction the store did not open', async () => {
  await expect(store.db.transaction().execute((trx) => announceWorkQueued(store, trx))).rejects.toThrow(
    /store\.write\(\) or store\.transaction\(\)/,
  );
});
