import type { ServiceContext } from '../context.js';
import { isoTime } from '../domain/clock.js';
import { announceQueued, type OutboxTable, requeueFailed } from '../store/outbox.js';

/**
 * Puts a failed outbox row (a webhook delivery, a notification) back in the
 * queue with its attempts from zero, and wakes the workers of every instance;
 * false when the row has not failed.
 */
export async function requeueAndWake(
  services: Pick<ServiceContext, 'store' | 'clock' | 'signals'>,
  table: OutboxTable,
  id: string,
): Promise<boolean> {
  const { store, clock, signals } = services;
  if (!(await requeueFailed(store, table, id, isoTime(clock.now())))) return false;
  await announceQueued(store);
  signals.queued();
  return true;
}
