import type { ServiceContext } from '../context.js';
import { isoTime } from '../domain/clock.js';
import { type OutboxTable, requeuedFields, requeueFailed } from '../store/outbox.js';

/**
 * Puts a failed outbox row (a webhook delivery, a notification) back in the
 * queue with its attempts from zero, and wakes the workers of every instance.
 * Answers the fields as written (the row's state at the re-queue, whatever a
 * woken worker does next), or undefined when the row has not failed.
 */
export async function requeueAndWake(
  services: Pick<ServiceContext, 'store' | 'clock'>,
  table: OutboxTable,
  id: string,
): Promise<ReturnType<typeof requeuedFields> | undefined> {
  const { store, clock } = services;
  const now = isoTime(clock.now());
  if (!(await requeueFailed(store, table, id, now))) return undefined;
  return requeuedFields(now);
}
