import type { Services } from '../app.js';
import { isoTime } from '../domain/clock.js';
import { hmacSha256 } from '../domain/crypto.js';
import { unseal } from '../domain/sealed.js';
import {
  type AttemptOutcome,
  type ClaimedDelivery,
  claimDueDeliveries,
  nextDeliveryDue,
  settleDelivery,
} from '../store/deliveries.js';

// Sends due webhook deliveries (SPEC §6): the stored body, byte for byte,
// signed with the webhook's secret. A 2xx settles it; anything else is retried
// on WEBHOOK_RETRY_SCHEDULE_MS (30 s, 60 s, 120 s) and then marked failed.

export const BATCH_SIZE = 64;
/** A claim outlives the 5 s attempt with room to spare; a crashed worker's claims fall due after it. */
export const LEASE_MS = 10_000;
const MAX_SLEEP_MS = 1000;

export function signatureHeader(secret: string, body: string): string {
  return `sha256=${hmacSha256(secret, body).toString('hex')}`;
}

export function deliverWebhooksTick(
  services: Pick<Services, 'store' | 'clock' | 'logger' | 'config' | 'keys' | 'outbound'>,
) {
  const { store, clock, logger, config, keys, outbound } = services;
  const schedule = config.webhookRetryScheduleMs;

  async function attempt(delivery: ClaimedDelivery): Promise<void> {
    let outcome: AttemptOutcome;
    const result = await outbound.post(delivery.url, delivery.payload, {
      'content-type': 'application/json',
      'x-service-signature': signatureHeader(unseal(keys.atRest, delivery.secret_sealed), delivery.payload),
      'x-service-event': delivery.type,
      'x-service-delivery': delivery.id,
    });
    const now = clock.now();
    if (result.ok && result.status >= 200 && result.status < 300) {
      outcome = { kind: 'succeeded', statusCode: result.status };
    } else {
      const statusCode = result.status ?? null;
      const error = result.ok ? `HTTP ${result.status}` : result.error;
      const gap = schedule[delivery.attempts - 1];
      outcome =
        gap === undefined
          ? { kind: 'failed', statusCode, error }
          : { kind: 'retry', statusCode, error, nextAttemptAt: isoTime(new Date(now.getTime() + gap)) };
    }
    const settled = await settleDelivery(store.db, delivery, outcome, isoTime(now));
    if (settled && outcome.kind === 'failed') {
      logger.error(
        {
          delivery_id: delivery.id,
          webhook_id: delivery.webhook_id,
          attempts: delivery.attempts,
          error: outcome.error,
        },
        'webhook delivery failed after its last retry',
      );
    }
  }

  return async (): Promise<number> => {
    const now = clock.now();
    const claimed = await claimDueDeliveries(store, {
      now: isoTime(now),
      leaseUntil: isoTime(new Date(now.getTime() + LEASE_MS)),
      limit: BATCH_SIZE,
    });
    await Promise.all(
      claimed.map((delivery) =>
        attempt(delivery).catch((error) =>
          logger.error({ err: error, delivery_id: delivery.id }, 'webhook delivery attempt could not be recorded'),
        ),
      ),
    );
    if (claimed.length === BATCH_SIZE) return 0;
    const next = await nextDeliveryDue(store.db);
    if (next === null) return MAX_SLEEP_MS;
    return Math.min(MAX_SLEEP_MS, Math.max(0, Date.parse(next) - clock.now().getTime()));
  };
}
