import type { ServiceContext } from '../context.js';
import { newId, newIds } from '../domain/ids.js';
import type { Mode } from '../domain/keys.js';
import type { DeliveryChannel, Pause } from '../domain/pause.js';
import { reviewerToken } from '../domain/response-token.js';
import { seal } from '../domain/sealed.js';
import { ApiError } from '../errors.js';
import { maskUrl, renderEmail, renderSlack } from '../messages/render.js';
import { type SlackMessage, slackQuestion } from '../messages/slack-blocks.js';
import { checkOutboundUrl } from '../net/address-policy.js';
import { queuedColumns } from '../store/notifications.js';
import type { NotificationKind, NotificationsTable, ReviewersTable } from '../store/schema.js';

// The notifications a pause asks for, rendered now and written with the
// pause (or with the reminder or escalation that sends them). Live ones are
// queued for sending; test ones are kept as `suppressed` so developers can see
// what would have gone out.

export interface NotifyRequest {
  email?: string[];
  slack_webhook_url?: string;
  slack?: { channel: string };
}

const invalidSlackUrl = (reason: string) =>
  new ApiError('invalid_request', `Invalid request: notify.slack_webhook_url ${reason}`, {
    fields: [{ field: 'notify.slack_webhook_url', problem: reason }],
  });

export async function planNotifications(
  services: Pick<ServiceContext, 'config' | 'mailer' | 'slack' | 'keys'>,
  mode: Mode,
  pause: Pause,
  notify: NotifyRequest | undefined,
  responseUrl: string,
  askedBy: string,
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
  if (mode === 'live' && notify.slack !== undefined && !services.slack) {
    throw new ApiError(
      'channel_unavailable',
      'The Slack app is not configured on this server (SLACK_BOT_TOKEN); use notify.slack_webhook_url or share response_url yourself.',
      { channel: 'slack' },
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
    options: pause.options,
    optionsStyle: pause.optionsStyle,
    expiresAt: pause.expiresAt,
    responseUrl,
  };
  const base = queuedColumns(pause, pause.createdAt);
  const rows: NotificationsTable[] = [];
  if (emails.length > 0) {
    const email = renderEmail({ ...question, askedBy });
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
        reviewer_id: null,
        kind: 'question',
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
      reviewer_id: null,
      kind: 'question',
    });
  }
  if (notify.slack !== undefined) {
    rows.push(
      slackRow(base, notify.slack.channel, slackQuestion({ ...question, pauseId: pause.id }), null, 'question'),
    );
  }
  return rows;
}

/**
 * A message the Slack app posts: to a channel, or to a reviewer (found by
 * their email when it is sent). The blocks are kept as they will be posted.
 */
function slackRow(
  base: ReturnType<typeof queuedColumns>,
  recipient: string,
  message: SlackMessage,
  reviewerId: string | null,
  kind: NotificationKind,
  id = newId('ntf'),
): NotificationsTable {
  return {
    ...base,
    id,
    channel: 'slack',
    recipient,
    target_sealed: null,
    subject: null,
    text_body: JSON.stringify(message),
    html_body: null,
    reviewer_id: reviewerId,
    kind,
  };
}

/** The link a reviewer votes through: theirs alone. */
export function reviewerUrl(
  services: Pick<ServiceContext, 'publicBaseUrl' | 'keys'>,
  reviewer: Pick<ReviewersTable, 'id' | 'pause_id'>,
): string {
  return `${services.publicBaseUrl}/r/${reviewerToken(services.keys.respondToken, reviewer.pause_id, reviewer.id)}`;
}

/** How a pause with reviewers is decided, in one line for a reviewer. */
export function quorumNote(pause: Pick<Pause, 'quorum'>, reviewers: number): string {
  const quorum = pause.quorum ?? 1;
  if (reviewers === 1) return 'You are the reviewer of this question.';
  if (quorum === 1) return `You are one of ${reviewers} reviewers; the first answer decides.`;
  return `You are one of ${reviewers} reviewers; ${quorum} must give the same answer.`;
}

/**
 * One email per reviewer, each with the reviewer's own link: the question
 * itself (at creation, or to reviewers added by escalation) or a reminder.
 */
export function planReviewerEmails(
  services: Pick<ServiceContext, 'publicBaseUrl' | 'keys'>,
  pause: Pause,
  reviewers: ReviewersTable[],
  input: {
    kind: NotificationKind;
    reviewerCount: number;
    now: string;
    askedBy: string;
    /** Default `["email"]`. */
    deliver?: readonly DeliveryChannel[];
  },
): NotificationsTable[] {
  if (reviewers.length === 0) return [];
  const deliver = input.deliver ?? ['email'];
  const base = queuedColumns(pause, input.now);
  const slack = deliver.includes('slack')
    ? reviewers.map((reviewer) =>
        slackRow(
          base,
          reviewer.email,
          slackQuestion({
            pauseId: pause.id,
            title: pause.title,
            body: pause.body,
            options: pause.options,
            optionsStyle: pause.optionsStyle,
            expiresAt: pause.expiresAt,
            reviewerNote: quorumNote(pause, input.reviewerCount),
            kind: input.kind === 'reminder' ? 'reminder' : 'question',
          }),
          reviewer.id,
          input.kind,
        ),
      )
    : [];
  if (!deliver.includes('email')) return slack;
  const ids = newIds('ntf', reviewers.length);
  const emails: NotificationsTable[] = reviewers.map((reviewer, index) => {
    const email = renderEmail({
      title: pause.title,
      body: pause.body,
      options: pause.options,
      optionsStyle: pause.optionsStyle,
      expiresAt: pause.expiresAt,
      responseUrl: reviewerUrl(services, reviewer),
      askedBy: input.askedBy,
      kind: input.kind === 'reminder' ? 'reminder' : 'question',
      reviewerNote: quorumNote(pause, input.reviewerCount),
      inboxUrl: `${services.publicBaseUrl}/inbox`,
    });
    return {
      ...base,
      id: ids[index] as string,
      channel: 'email',
      recipient: reviewer.email,
      target_sealed: null,
      subject: email.subject,
      text_body: email.text,
      html_body: email.html,
      reviewer_id: reviewer.id,
      kind: input.kind,
    };
  });
  return [...emails, ...slack];
}
