import type { ServiceContext } from '../context.js';
import { isoTime } from '../domain/clock.js';
import { hmacSha256 } from '../domain/crypto.js';
import { newId } from '../domain/ids.js';
import { unseal } from '../domain/sealed.js';
import {
  DISABLED_REASONS,
  MAX_ATTEMPT_RESPONSE_BYTES,
  standardSignature,
  standardSigningKey,
  storableText,
} from '../domain/webhooks.js';
import { renderWebhookDisabledEmail } from '../messages/render.js';
import { claimDeliveries, type DeliveryToSend } from '../store/deliveries.js';
import { insertNotifications } from '../store/notifications.js';
import { disableWebhook } from '../store/webhooks.js';
import { httpAttempt, outboxTick } from './outbox.js';

// Sends due webhook deliveries (docs/webhooks.md): the stored body, byte for byte,
// signed with the webhook's secret, by SPEC's header and by Standard Webhooks'.
// A 2xx settles it; anything else is retried on WEBHOOK_RETRY_SCHEDULE_MS
// (30 s, 60 s, 120 s) and then marked failed. Every attempt is kept. A 410,
// or failing for WEBHOOK_DISABLE_AFTER, disables the webhook.

export const BATCH_SIZE = 64;
/**
 * Batches claimed ahead of those attempting: a PostgreSQL claim (a round trip
 * and a commit, ~2-10 ms) must not leave quick receivers' slots waiting.
 */
const BATCHES_AHEAD = 4;

/** The error of a delivery settled as failed, unsent, because its webhook is disabled. */
const WEBHOOK_DISABLED = 'webhook disabled';

export function signatureHeader(secret: string, body: string): string {
  return `sha256=${hmacSha256(secret, body, 'hex')}`;
}

/** A webhook's secret as the worker keeps it: the text (SPEC's header) and the Standard Webhooks key. */
interface SigningSecret {
  secret: string;
  key: Buffer;
}

/** How many webhooks' secrets a worker keeps unsealed; past that it starts over. */
const UNSEALED_SECRETS = 1024;

/**
 * Unseals each webhook's signing secret once rather than per delivery (AES-GCM
 * per attempt was ~5% of a worker's time). Keyed by the sealed text, which is
 * fixed for the secret's life (a rotation seals a new one).
 */
function secretUnsealer(key: Buffer): (sealed: string) => SigningSecret {
  const secrets = new Map<string, SigningSecret>();
  return (sealed) => {
    let secret = secrets.get(sealed);
    if (secret === undefined) {
      const text = unseal(key, sealed);
      secret = { secret: text, key: standardSigningKey(text) };
      if (secrets.size >= UNSEALED_SECRETS) secrets.clear();
      secrets.set(sealed, secret);
    }
    return secret;
  };
}

/**
 * The headers of one attempt: SPEC's (`X-Service-Signature` by the current
 * secret) and Standard Webhooks' (`webhook-signature` by the current secret
 * and, for ROTATION_OVERLAP_MS after a rotation, the previous one too).
 */
export function deliveryHeaders(
  delivery: Pick<
    DeliveryToSend,
    'id' | 'type' | 'payload' | 'secret_sealed' | 'previous_secret_sealed' | 'previous_secret_expires_at'
  >,
  at: Date,
  secretOf: (sealed: string) => SigningSecret,
): Record<string, string> {
  const current = secretOf(delivery.secret_sealed);
  const timestamp = Math.floor(at.getTime() / 1000);
  let signatures = standardSignature(current.key, delivery.id, timestamp, delivery.payload);
  const previous = delivery.previous_secret_sealed;
  if (
    previous !== null &&
    delivery.previous_secret_expires_at !== null &&
    delivery.previous_secret_expires_at > isoTime(at)
  ) {
    signatures += ` ${standardSignature(secretOf(previous).key, delivery.id, timestamp, delivery.payload)}`;
  }
  return {
    'content-type': 'application/json',
    'x-service-signature': signatureHeader(current.secret, delivery.payload),
    'x-service-event': delivery.type,
    'x-service-delivery': delivery.id,
    'webhook-id': delivery.id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signatures,
  };
}

/**
 * The first MAX_ATTEMPT_RESPONSE_BYTES of an answer, cut on a character
 * boundary, its U+0000s replaced (storableText).
 */
export function responseStart(body: string | undefined): string | null {
  if (body === undefined) return null;
  const bytes = Buffer.from(body, 'utf8');
  if (bytes.length <= MAX_ATTEMPT_RESPONSE_BYTES) return storableText(body);
  return storableText(new TextDecoder().decode(bytes.subarray(0, MAX_ATTEMPT_RESPONSE_BYTES)).replace(/\uFFFD$/, ''));
}

/**
 * Disables the webhook and, in the same transaction, queues the email that
 * tells its owner (live mode, where email is configured): sent by the
 * notifications' outbox, with its retries.
 */
async function disableAndTell(
  services: Pick<ServiceContext, 'store' | 'logger' | 'mailer' | 'publicBaseUrl'>,
  input: { webhookId: string; reason: string; now: string; failingSinceAtMost?: string },
): Promise<void> {
  const { store, logger, mailer, publicBaseUrl } = services;
  const disabled = await store.write(async (trx) => {
    const disabled = await disableWebhook(store, input, trx);
    if (disabled?.mode === 'live' && mailer) {
      const email = renderWebhookDisabledEmail({
        url: disabled.url,
        reason: input.reason,
        consoleUrl: `${publicBaseUrl}/console/webhooks/${input.webhookId}`,
      });
      await insertNotifications(
        store,
        [
          {
            id: newId('ntf'),
            pause_id: null,
            developer_id: disabled.developerId,
            channel: 'email',
            recipient: disabled.email,
            target_sealed: null,
            subject: email.subject,
            text_body: email.text,
            html_body: email.html,
            reviewer_id: null,
            kind: 'webhook_disabled',
            status: 'pending',
            attempts: 0,
            next_attempt_at: input.now,
            last_status_code: null,
            last_error: null,
            created_at: input.now,
            updated_at: input.now,
            completed_at: null,
          },
        ],
        trx,
      );
    }
    return disabled;
  });
  if (disabled) {
    logger.warn({ webhook_id: input.webhookId, mode: disabled.mode, reason: input.reason }, 'webhook disabled');
  }
}

export function deliverWebhooksTick(
  services: Pick<
    ServiceContext,
    'store' | 'clock' | 'logger' | 'config' | 'keys' | 'outbound' | 'metrics' | 'mailer' | 'publicBaseUrl'
  >,
) {
  const { store, logger, keys, outbound, config } = services;
  const secretOf = secretUnsealer(keys.atRest);
  return outboxTick(services, {
    table: 'deliveries',
    batchSize: BATCH_SIZE,
    claim: (input) => claimDeliveries(store, input),
    batchesAhead: BATCHES_AHEAD,
    async attempt(delivery, at) {
      // Its webhook is disabled: failed for good, not sent (and no attempt kept, see record).
      if (delivery.disabled_at !== null) return { ok: false, statusCode: null, error: WEBHOOK_DISABLED, final: true };
      const result = await outbound.post(delivery.url, delivery.payload, deliveryHeaders(delivery, at, secretOf));
      const attempt = httpAttempt(result);
      // A 410 disables the webhook (afterFailure): no retry either.
      return !attempt.ok && attempt.statusCode === 410 ? { ...attempt, final: true } : attempt;
    },
    // Only attempts that were made are kept.
    record: (delivery, result, at, durationMs) =>
      delivery.disabled_at !== null
        ? undefined
        : {
            delivery_id: delivery.id,
            webhook_id: delivery.webhook_id,
            at,
            duration_ms: durationMs,
            status_code: result.statusCode,
            response_body: responseStart(result.responseBody),
            error: result.ok ? null : result.error,
          },
    async afterFailure(delivery, result, now) {
      if (delivery.disabled_at !== null) return;
      const input = { webhookId: delivery.webhook_id, now: isoTime(now) };
      if (result.statusCode === 410) {
        await disableAndTell(services, { ...input, reason: DISABLED_REASONS.gone });
        return;
      }
      // The streak as loaded (null: this failure began it, a moment ago).
      const since = delivery.failing_since;
      const cutoff = isoTime(new Date(now.getTime() - config.webhookDisableAfterMs));
      if (since === null || since > cutoff) return;
      // Only if no success has ended the streak since the load.
      const reason = DISABLED_REASONS.failing(since);
      await disableAndTell(services, { ...input, reason, failingSinceAtMost: cutoff });
    },
    failed(delivery, error) {
      if (delivery.disabled_at !== null) return; // not an outage: the webhook was disabled
      logger.error(
        { delivery_id: delivery.id, webhook_id: delivery.webhook_id, attempts: delivery.attempts, error },
        'webhook delivery failed after its last retry',
      );
    },
  });
}
