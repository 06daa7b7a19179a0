import type { ServiceContext } from '../context.js';
import { hmacSha256 } from '../domain/crypto.js';
import { unseal } from '../domain/sealed.js';
import { loadDeliveries } from '../store/deliveries.js';
import { httpAttempt, outboxTick } from './outbox.js';

// Sends due webhook deliveries (docs/webhooks.md): the stored body, byte for byte,
// signed with the webhook's secret. A 2xx settles it; anything else is retried
// on WEBHOOK_RETRY_SCHEDULE_MS (30 s, 60 s, 120 s) and then marked failed.

export const BATCH_SIZE = 64;

export function signatureHeader(secret: string, body: string): string {
  return `sha256=${hmacSha256(secret, body, 'hex')}`;
}

/** How many webhooks' secrets a worker keeps unsealed; past that it starts over. */
const UNSEALED_SECRETS = 1024;

/**
 * Unseals each webhook's signing secret once rather than per delivery (AES-GCM
 * per attempt was ~5% of a worker's time). Keyed by the sealed text, which is
 * fixed for a webhook's life.
 */
function secretUnsealer(key: Buffer): (sealed: string) => string {
  const secrets = new Map<string, string>();
  return (sealed) => {
    let secret = secrets.get(sealed);
    if (secret === undefined) {
      secret = unseal(key, sealed);
      if (secrets.size >= UNSEALED_SECRETS) secrets.clear();
      secrets.set(sealed, secret);
    }
    return secret;
  };
}

export function deliverWebhooksTick(
  services: Pick<ServiceContext, 'store' | 'clock' | 'logger' | 'config' | 'keys' | 'outbound' | 'metrics'>,
) {
  const { store, logger, keys, outbound } = services;
  const secretOf = secretUnsealer(keys.atRest);
  return outboxTick(services, {
    table: 'deliveries',
    batchSize: BATCH_SIZE,
    load: (claims) => loadDeliveries(store, claims),
    async attempt(delivery) {
      const result = await outbound.post(delivery.url, delivery.payload, {
        'content-type': 'application/json',
        'x-service-signature': signatureHeader(secretOf(delivery.secret_sealed), delivery.payload),
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
