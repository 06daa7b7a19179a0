import type { ServiceContext } from '../context.js';
import { isoTime } from '../domain/clock.js';
import { expireDuePauses, nextExpiry } from '../store/transitions.js';

// Times out pauses whose expires_at has passed. No timer per pause: each tick
// takes due pauses from the expires_at index in batches, then sleeps until the
// next one falls due, but never longer than MAX_SLEEP_MS, so a pause created
// elsewhere (another instance, another process) is still caught within it.

export const BATCH_SIZE = 500;
export const MAX_SLEEP_MS = 500;
const MIN_SLEEP_MS = 20;

export function expirePausesTick(services: Pick<ServiceContext, 'store' | 'clock' | 'logger' | 'metrics'>) {
  const { store, clock, logger, metrics } = services;
  return async (): Promise<number> => {
    for (;;) {
      const expired = await expireDuePauses(store, {
        now: isoTime(clock.now()),
        limit: BATCH_SIZE,
      });
      if (expired.length > 0) {
        const recordedAt = clock.now().getTime();
        for (const pause of expired) metrics.timeoutLag.observe((recordedAt - Date.parse(pause.expiresAt)) / 1000);
        logger.debug({ count: expired.length }, 'pauses timed out');
      }
      if (expired.length < BATCH_SIZE) break;
    }
    const next = await nextExpiry(store);
    if (next === null) return MAX_SLEEP_MS;
    const untilDue = Date.parse(next) - clock.now().getTime();
    return Math.min(MAX_SLEEP_MS, Math.max(MIN_SLEEP_MS, untilDue));
  };
}
