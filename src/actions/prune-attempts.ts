import type { ServiceContext } from '../context.js';
import { isoTime } from '../domain/clock.js';
import { pruneAttempts } from '../store/delivery-attempts.js';

// Deletes delivery attempts older than WEBHOOK_ATTEMPT_RETENTION (default 30
// days), a batch at a time, and looks again every PRUNE_EVERY_MS. The
// deliveries themselves stay; their pages then show no attempts.

export const BATCH_SIZE = 1000;
export const PRUNE_EVERY_MS = 60 * 60 * 1000;

export function pruneAttemptsTick(services: Pick<ServiceContext, 'store' | 'clock' | 'config'>) {
  const { store, clock, config } = services;
  return async (): Promise<number> => {
    const before = isoTime(new Date(clock.now().getTime() - config.webhookAttemptRetentionMs));
    while ((await pruneAttempts(store, { before, limit: BATCH_SIZE })) >= BATCH_SIZE) {
      // a full batch: more may be waiting
    }
    return PRUNE_EVERY_MS;
  };
}
