import type { Store } from '../../src/store/store.js';
import { sleep } from '../helpers/pauses.js';

// The end of a chaos run: no more calls, and the service finishes what it owes.
// Settled means no pending pause expires within the horizon (the short ones have
// all timed out; the long ones outlive the run) and both outboxes are drained.

export interface Settling {
  settled: boolean;
  waitedMs: number;
  /** What was still owed when the wait ended. */
  left: { expiring: number; deliveries: number; notifications: number };
}

export async function waitUntilSettled(store: Store, options: { horizonMs: number; timeoutMs: number }) {
  const started = Date.now();
  for (;;) {
    const left = await owed(store, new Date(Date.now() + options.horizonMs).toISOString());
    const settled = left.expiring + left.deliveries + left.notifications === 0;
    const waitedMs = Date.now() - started;
    if (settled || waitedMs > options.timeoutMs) return { settled, waitedMs, left } satisfies Settling;
    await sleep(250);
  }
}

async function owed(store: Store, horizon: string): Promise<Settling['left']> {
  const count = (rows: Array<{ n: string | number | bigint }>) => Number(rows[0]?.n ?? 0);
  const [expiring, deliveries, notifications] = await Promise.all([
    store.db
      .selectFrom('pauses')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('status', '=', 'pending')
      .where('expires_at', '<=', horizon)
      .execute(),
    store.db
      .selectFrom('deliveries')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('status', '=', 'pending')
      .execute(),
    store.db
      .selectFrom('notifications')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('status', '=', 'pending')
      .execute(),
  ]);
  return { expiring: count(expiring), deliveries: count(deliveries), notifications: count(notifications) };
}
