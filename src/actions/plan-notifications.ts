import type { ServiceContext } from '../context.js';
import { newId } from '../domain/ids.js';
import type { Mode } from '../domain/keys.js';
import { seal } from '../domain/sealed.js';
import { ApiError } from '../errors.js';
import { maskUrl, renderEmail, renderSlack } from '../messages/render.js';
import { checkOutboundUrl } from '../net/address-policy.js';
import type { NotificationsTable, PausesTable } from '../store/schema.js';

// The notifications a new pause asks for, rendered now and written with the
// pause. Live ones are queued for sending; test ones are kept as `suppressed`
// so developers can see what would have gone out.

export interface NotifyRequest {
  email?: string[];
  slack_webhook_url?: string;
}

const invalidSlackUrl = (reason: string) =>
  new ApiError('invalid_request', `Invalid request: notify.slack_webhook_url ${reason}`, {
    fields: [{ field: 'notify.slack_webhook_url', problem: reason }],
  });

export async function planNotifications(
  services: Pick<ServiceContext, 'config' | 'mailer' | 'keys'>,
  mode: Mode,
  pause: PausesTable,
  notify: NotifyRequest | undefined,
  responseUrl: string,
): Promise<NotificationsTable[]> {
  if (!notify) return [];
  const { config, mailer, keys } = services;
  const emails = notify.email ?? [];
  if (mode === 'live' && emails.length > 0 && !mailer) {
    throw new ApiError(
      'channel_unavailable',
      'Email notifications are not configured on this server (SMTP_URL, EMAIL_FROM); share response_url yourself.',
      { channel: 'email' },
    );
  }
  if (notify.slack_webhook_url !== undefined) {
    const checked = await checkOutboundUrl(notify.slack_webhook_url, {
      allowedNetworks: config.webhookAllowedNetworks,
    });
    if (!checked.ok) throw invalidSlackUrl(checked.reason);
  }

  const question = {
    title: pause.title,
    body: pause.body,
    options: JSON.parse(pause.options) as string[],
    expiresAt: pause.expires_at,
    responseUrl,
  };
  const queued = mode === 'live';
  const base = {
    pause_id: pause.id,
    developer_id: pause.developer_id,
    status: queued ? ('pending' as const) : ('suppressed' as const),
    attempts: 0,
    next_attempt_at: queued ? pause.created_at : null,
    last_status_code: null,
    last_error: null,
    created_at: pause.created_at,
    updated_at: pause.created_at,
    completed_at: null,
  };
  const rows: NotificationsTable[] = [];
  if (emails.length > 0) {
    const email = renderEmail(question);
    for (const address of emails) {
      rows.push({
        ...base,
        id: newId('ntf'),
        channel: 'email',
        recipient: address,
        target_sealed: null,
        subject: email.subject,
        text_body: email.text,
        html_body: email.html,
      });
    }
  }
  if (notify.slack_webhook_url !== undefined) {
    rows.push({
      ...base,
      id: newId('ntf'),
      channel: 'slack',
      recipient: maskUrl(notify.slack_webhook_url),
      target_sealed: seal(keys.atRest, notify.slack_webhook_url),
      subject: null,
      text_body: renderSlack(question),
      html_body: null,
    });
  }
  return rows;
}
