import { afterEach, beforeEach, expect, it } from 'vitest';
import { insertDeveloper, pendingPauseRow } from '../../bench/lib/pauses.js';
import { systemClock } from '../../src/domain/clock.js';
import { createLogger } from '../../src/logger.js';
import { PauseWaiters } from '../../src/signals.js';
import { migrateToLatest, openStore, type Store } from '../../src/store/store.js';
import { cancelPause, respondToPause } from '../../src/store/transitions.js';

// The waiter registry in PauseWaiters: waiters parked per pause id, woken by
// a wake-up for their pause, by the one shared re-check that reads every
// waited-on pause's status at once (only those no longer pending), by their
// timeout, by the service closing or by their client going away; and none
// is left behind. Over a real, migrated in-memory SQLite store.

let store: Store;
let waiters: PauseWaiters;
const HOUR = 3_600_000;

beforeEach(async () => {
  store = openStore({ kind: 'sqlite', path: ':memory:' });
  await migrateToLatest(store);
  await insertDeveloper(store, 'dev_1');
  waiters = new PauseWaiters(store, createLogger('silent'));
});
afterEach(async () => {
  waiters.close();
  await store.close();
});

async function addPauses(ids: string[]): Promise<void> {
  const now = new Date().toISOString();
  const owner = { developerId: 'dev_1', mode: 'test' as const, title: 'Ship it?' };
  const rows = ids.map((id) =>
    pendingPauseRow({ ...owner, expiresAt: new Date(Date.now() + HOUR).toISOString() }, id, now),
  );
  for (let i = 0; i < rows.length; i += 100) {
    await store.db
      .insertInto('pauses')
      .values(rows.slice(i, i + 100))
      .execute();
  }
}

const respond = (ids: string[]) =>
  store.db
    .updateTable('pauses')
    .set({ status: 'responded', response_choice: 'approve' })
    .where('id', 'in', ids)
    .execute();

/** Whether `promise` has settled by the time pending callbacks have run. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(() => {
    done = true;
  });
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

it('wakes only the waiters of the pause signalled, and leaves no entry behind', async () => {
  await addPauses(['pause_a', 'pause_b']);
  const a1 = waiters.waitForPause('pause_a', HOUR);
  const a2 = waiters.waitForPause('pause_a', HOUR);
  const b = waiters.waitForPause('pause_b', HOUR);
  expect(waiters.waiterCount).toBe(3);
  waiters.wake(['pause_a']);
  await Promise.all([a1, a2]);
  expect(await settled(b)).toBe(false);
  expect(waiters.waiterCount).toBe(1);
  waiters.wake(['pause_b']);
  await b;
  expect(waiters.waiterCount).toBe(0);
});

it('one re-check wakes, in one pass, exactly the waiters whose pause left pending', async () => {
  const ids = Array.from({ length: 1200 }, (_, i) => `pause_${String(i).padStart(4, '0')}`);
  await addPauses(ids);
  const waits = ids.map((id) => waiters.waitForPause(id, HOUR));
  expect(waiters.waiterCount).toBe(1200);
  // Changed where this instance cannot hear it: no wake-up, only the re-check finds out.
  const answered = ids.filter((_, i) => i % 3 === 0);
  await respond(answered);
  await waiters.recheck();
  for (const [i, wait] of waits.entries()) expect(await settled(wait), ids[i]).toBe(i % 3 === 0);
  expect(waiters.waiterCount).toBe(ids.length - answered.length);
  await waiters.recheck(); // nothing more changed: nobody else wakes
  expect(waiters.waiterCount).toBe(ids.length - answered.length);
});

it('wakes a waiter whose pause is gone (its read then answers not found)', async () => {
  const wait = waiters.waitForPause('pause_missing', HOUR);
  await waiters.recheck();
  await wait;
  expect(waiters.waiterCount).toBe(0);
});

it('ends a wait after its time, without touching the other waiters', async () => {
  await addPauses(['pause_t']);
  const long = waiters.waitForPause('pause_t', HOUR);
  const startedAt = performance.now();
  await waiters.waitForPause('pause_t', 50);
  expect(performance.now() - startedAt).toBeGreaterThanOrEqual(45);
  expect(waiters.waiterCount).toBe(1);
  expect(await settled(long)).toBe(false);
  waiters.wake(['pause_t']);
  await long;
  expect(waiters.waiterCount).toBe(0);
});

it('ends the wait of a client that goes away, and answers at once one that already has', async () => {
  await addPauses(['pause_x']);
  const gone = new AbortController();
  const abandoned = waiters.waitForPause('pause_x', HOUR, gone.signal);
  const staying = waiters.waitForPause('pause_x', HOUR);
  gone.abort();
  await abandoned;
  expect(waiters.waiterCount).toBe(1);
  await waiters.waitForPause('pause_x', HOUR, gone.signal);
  expect(waiters.waiterCount).toBe(1);
  waiters.wake(['pause_x']);
  await staying;
  expect(waiters.waiterCount).toBe(0);
});

it('wakes every waiter, of pauses and of any change, when the service closes; later waits answer at once', async () => {
  await addPauses(['pause_c', 'pause_d']);
  const waits = [waiters.waitForPause('pause_c', HOUR), waiters.waitForPause('pause_d', HOUR), waiters.waitAny(HOUR)];
  waiters.close();
  await Promise.all(waits);
  expect(waiters.waiterCount).toBe(0);
  await waiters.waitForPause('pause_c', HOUR);
  await waiters.waitAny(HOUR);
});

it('wakes the waiters of any change on every change, and on their timeout', async () => {
  const first = waiters.waitAny(HOUR);
  const second = waiters.waitAny(HOUR);
  waiters.wake(['pause_whatever']);
  await Promise.all([first, second]);
  expect(waiters.waiterCount).toBe(0);
  await waiters.waitAny(20);
  expect(waiters.waiterCount).toBe(0);
});

it('counts each holder’s wait slots up to the cap, and frees one when its wait ends', () => {
  const releases = [waiters.takeWaitSlot('key_a', 2), waiters.takeWaitSlot('key_a', 2)];
  expect(releases.every(Boolean)).toBe(true);
  expect(waiters.takeWaitSlot('key_a', 2)).toBeUndefined();
  const other = waiters.takeWaitSlot('key_b', 2);
  expect(other).toBeDefined();
  releases[0]?.();
  releases[0]?.(); // a second release frees nothing more
  const again = waiters.takeWaitSlot('key_a', 2);
  expect(again).toBeDefined();
  expect(waiters.takeWaitSlot('key_a', 2)).toBeUndefined();
  again?.();
  releases[1]?.();
  other?.();
  expect(waiters.waitSlotsHeld).toBe(0);
});

// A write owns its wake-ups: a transition wakes its pause's waiters once it
// commits, with nobody above the store signalling. These waiters re-check
// once an hour, so whatever wakes them is the wake-up itself.

it('a transition wakes its pause’s waiters once it commits, with nobody signalling, and no one else’s', async () => {
  const hourly = new PauseWaiters(store, createLogger('silent'), HOUR);
  await addPauses(['pause_a', 'pause_b']);
  const a = hourly.waitForPause('pause_a', HOUR);
  const b = hourly.waitForPause('pause_b', HOUR);
  const now = new Date().toISOString();
  expect(
    await respondToPause(store, { pauseId: 'pause_a', choice: 'approve', text: null, values: null, edited: 0, now }),
  ).not.toBeNull();
  expect(await settled(a)).toBe(true);
  expect(await settled(b)).toBe(false);
  const cancel = { pauseId: 'pause_b', developerId: 'dev_1', mode: 'test' as const, clock: systemClock };
  expect(await cancelPause(store, cancel)).not.toBeNull();
  expect(await settled(b)).toBe(true);
  expect(hourly.waiterCount).toBe(0);
  hourly.close();
});

it('a transition that changes nothing wakes nobody', async () => {
  const hourly = new PauseWaiters(store, createLogger('silent'), HOUR);
  await addPauses(['pause_a']);
  const a = hourly.waitForPause('pause_a', HOUR);
  const now = new Date().toISOString();
  expect(
    await respondToPause(store, {
      pauseId: 'pause_a',
      choice: 'not an option',
      text: null,
      values: null,
      edited: 0,
      now,
    }),
  ).toBeNull();
  expect(await settled(a)).toBe(false);
  hourly.close();
  await a;
});
