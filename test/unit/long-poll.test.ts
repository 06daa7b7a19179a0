import { afterEach, beforeEach, expect, it } from 'vitest';
import { longPoll, RECHECK_MS } from '../../src/actions/long-poll.js';
import { createLogger } from '../../src/logger.js';
import { PauseWaiters } from '../../src/signals.js';
import { migrateToLatest, openStore, type Store } from '../../src/store/store.js';

// longPoll() with the wake-ups the routes use: real PauseWaiters (over an
// in-memory SQLite store, migrated but empty) and real timers. A "pause" here
// is a value the test changes while a poll waits; it is not in the database,
// so the shared re-check finds it "not pending" and wakes its waiter to
// re-read every RECHECK_MS, as it would a pause changed unheard.

let store: Store;
let waiters: PauseWaiters;
beforeEach(async () => {
  store = openStore({ kind: 'sqlite', path: ':memory:' });
  await migrateToLatest(store);
  waiters = new PauseWaiters(store, createLogger('silent'));
});
afterEach(async () => {
  waiters.close();
  await store.close();
});

/** A pause whose status the test sets, counting the reads of it. */
function pauseState(id: string) {
  const state = { status: 'pending', reads: 0 };
  const poll = (waitSeconds: number, signal?: AbortSignal) =>
    longPoll({
      waitSeconds,
      read: async () => {
        state.reads++;
        return { id, status: state.status };
      },
      isDone: (pause) => pause.status !== 'pending',
      wake: (pause, ms, signal) => waiters.waitForPause(pause.id, ms, signal),
      isClosed: () => waiters.isClosed,
      signal,
    });
  return { state, poll };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs `work`, returning its result and how long it took. */
async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const startedAt = performance.now();
  const value = await work();
  return { value, ms: performance.now() - startedAt };
}

it('answers after one read when the first answer is done, or when there is no wait', async () => {
  const done = pauseState('pause_done');
  done.state.status = 'responded';
  expect((await done.poll(30)).status).toBe('responded');
  expect(done.state.reads).toBe(1);

  const pending = pauseState('pause_pending');
  const { value, ms } = await timed(() => pending.poll(0));
  expect(value.status).toBe('pending');
  expect(pending.state.reads).toBe(1);
  expect(ms).toBeLessThan(500);
});

it('reads again as soon as the pause it read is signalled, long before the re-check', async () => {
  const { state, poll } = pauseState('pause_a');
  const other = pauseState('pause_b');
  const waiting = timed(() => poll(30));
  const otherWaiting = other.poll(30);
  await sleep(100);
  state.status = 'responded';
  waiters.wake(['pause_a']);
  const { value, ms } = await waiting;
  expect(value.status).toBe('responded');
  expect(state.reads).toBe(2);
  expect(ms).toBeLessThan(100 + RECHECK_MS * 0.7);
  // The other pause's waiter was not woken by it: still on its first read.
  expect(other.state.reads).toBe(1);
  other.state.status = 'cancelled';
  waiters.wake(['pause_b']);
  expect((await otherWaiting).status).toBe('cancelled');
});

it('re-reads every RECHECK_MS when no wake-up comes (one signalled elsewhere, unheard)', async () => {
  const { state, poll } = pauseState('pause_unheard');
  const waiting = timed(() => poll(30));
  await sleep(100);
  state.status = 'timed_out'; // changed with no signal here
  const { value, ms } = await waiting;
  expect(value.status).toBe('timed_out');
  expect(state.reads).toBe(2);
  expect(ms).toBeGreaterThanOrEqual(RECHECK_MS - 20);
  expect(ms).toBeLessThan(RECHECK_MS * 5);
});

it('answers with the last read when the wait is over', async () => {
  const { state, poll } = pauseState('pause_slow');
  const { value, ms } = await timed(() => poll(2));
  expect(value.status).toBe('pending');
  // Read at the start, at each re-check, and once more at the deadline.
  expect(state.reads).toBeGreaterThanOrEqual(3);
  expect(ms).toBeGreaterThanOrEqual(2000 - 20);
  expect(ms).toBeLessThan(2000 + RECHECK_MS * 3);
});

it('answers at once, with a fresh read, when the service closes', async () => {
  const { state, poll } = pauseState('pause_closing');
  const waiting = timed(() => poll(30));
  await sleep(100);
  waiters.close();
  const { value, ms } = await waiting;
  expect(value.status).toBe('pending');
  expect(state.reads).toBe(2);
  expect(ms).toBeLessThan(100 + RECHECK_MS * 0.7);
});

it('answers at once, with what it last read, when its signal aborts (the client went away)', async () => {
  const { state, poll } = pauseState('pause_abandoned');
  const gone = new AbortController();
  const waiting = timed(() => poll(30, gone.signal));
  await sleep(100);
  gone.abort();
  const { value, ms } = await waiting;
  expect(value.status).toBe('pending');
  expect(state.reads).toBe(1);
  expect(ms).toBeLessThan(100 + RECHECK_MS * 0.7);
  // Aborted before it starts: one read, no wait.
  expect((await timed(() => poll(30, gone.signal))).ms).toBeLessThan(RECHECK_MS * 0.7);
});

it('ends with the error of a read', async () => {
  let reads = 0;
  const failing = longPoll({
    waitSeconds: 30,
    read: async () => {
      if (++reads === 2) throw new Error('pause gone');
      return 'pending';
    },
    isDone: () => false,
    wake: (_value, ms) => waiters.waitAny(ms),
    isClosed: () => waiters.isClosed,
  });
  await sleep(50);
  waiters.wake(['any']);
  await expect(failing).rejects.toThrow('pause gone');
  expect(reads).toBe(2);
});
