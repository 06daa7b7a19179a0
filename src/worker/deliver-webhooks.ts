import type { Services } from '../app.js';
import { hmacSha256 } from '../domain/crypto.js';
import { unseal } from '../domain/sealed.js';
import { loadDeliveries } from '../store/deliveries.js';
import { httpAttempt, outboxTick } from './outbox-worker.js';

// Sends due webhook deliveries (SPEC §6): the stored body, byte for byte,
// signed with the webhook's secret. A 2xx settles it; anything else is retried
// on WEBHOOK_RETRY_SCHEDULE_MS (30 s, 60 s, 120 s) and then marked failed.

export const BATCH_SIZE = 64;

export function signatureHeader(secret: string, body: string): string {
  return `sha256=${hmacSha256(secret, body).toString('hex')}`;
}

export function deliverWebhooksTick(
  services: Pick<Services, 'store' | 'clock' | 'logger' | 'config' | 'keys' | 'outbound' | 'metrics'>,
) {
  const { store, logger, keys, outbound } = services;
  return outboxTick(services, {
    table: 'deliveries',
    batchSize: BATCH_SIZE,
    load: (claims) => loadDeliveries(store.db, claims),
    async attempt(delivery) {
      const result = await outbound.post(delivery.url, delivery.payload, {
        'content-type': 'application/json',
        'x-service-signature': signatureHeader(unseal(keys.atRest, delivery.secret_sealed), delivery.payload),
        'x-service-event': delivery.type,
        'x-service-delivery': delivery.id,
      });
      return httpAttempt(result);
    },
    failed(delivery, error) {
      logger.error(
        { delivery_id: delivery.id, webhook_id: delivery.webhook_id, attempts: delivery.attempts, error },
        'webhook delivery failed after its last retry',
      );
    },
  });
}
