import type { ServiceContext } from '../context.js';
import { unseal } from '../domain/sealed.js';
import { claimNotifications } from '../store/notifications.js';
import { httpAttempt, outboxTick } from './outbox.js';
import { attemptSlackMessage } from './slack.js';

// Sends live notifications: email through SMTP, Slack's incoming webhooks
// through the SSRF-safe client, the Slack app's messages through its Web API
// (actions/slack.ts). Test-mode notifications are written as `suppressed` and never get here.

export const BATCH_SIZE = 32;

export function sendNotificationsTick(
  services: Pick<
    ServiceContext,
    'store' | 'clock' | 'logger' | 'config' | 'keys' | 'outbound' | 'metrics' | 'mailer' | 'slack' | 'publicBaseUrl'
  >,
) {
  const { store, logger, keys, outbound, mailer } = services;
  return outboxTick(services, {
    table: 'notifications',
    batchSize: BATCH_SIZE,
    claim: (input) => claimNotifications(store, input),
    async attempt(notification) {
      if (notification.channel === 'email') {
        if (!mailer) return { ok: false, statusCode: null, error: 'email is not configured on this server' };
        const sent = await mailer.send(notification.recipient, {
          subject: notification.subject ?? '',
          text: notification.text_body,
          html: notification.html_body ?? '',
        });
        return sent.ok ? { ok: true, statusCode: null } : sent;
      }
      // A Slack message without a webhook URL is the Slack app's.
      if (notification.target_sealed === null) return attemptSlackMessage(services, notification);
      const url = unseal(keys.atRest, notification.target_sealed ?? '');
      const result = await outbound.post(url, notification.text_body, { 'content-type': 'application/json' });
      return httpAttempt(result);
    },
    failed(notification, error) {
      logger.error(
        { notification_id: notification.id, pause_id: notification.pause_id, channel: notification.channel, error },
        'notification failed after its last retry',
      );
    },
  });
}
