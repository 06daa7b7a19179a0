import type { ServiceContext } from '../context.js';
import type { ReviewerRef, Vote } from '../domain/events.js';
import type { Form, OptionStyle } from '../domain/form.js';
import type { Mode } from '../domain/keys.js';
import {
  currentOutcome,
  type Pause,
  type PauseResponse,
  type PauseStatus,
  type SlackResponder,
} from '../domain/pause.js';
import { responseToken } from '../domain/response-token.js';
import { type NotificationSummary, notificationsOf } from '../store/notifications.js';
import { type OwnVote, ownVote, reviewersOf, voteOf } from '../store/reviewers.js';
import type { NotificationsTable, ReviewersTable } from '../store/schema.js';
import { reviewerUrl } from './plan-notifications.js';

// A pause as developers see it, through the API and any other front end.
// The HTTP response schemas (routes/pauses/schemas.ts) are checked against
// these types when the service is type-checked.

/** A notification as it appears on its pause. */
export interface PresentedNotification {
  id: string;
  channel: NotificationsTable['channel'];
  /** The address, or the Slack URL with its secret part hidden. */
  to: string;
  status: NotificationsTable['status'];
  attempts: number;
  last_error: string | null;
  sent_at: string | null;
}

/** A reviewer as the developer sees them: with their own link and vote. */
export interface PresentedReviewer {
  id: string;
  email: string;
  name: string | null;
  response_url: string;
  vote: OwnVote | null;
  added_by: ReviewersTable['added_by'];
}

/** The outcome, and on a pause with reviewers who decided it and every vote. */
export interface PresentedResponse extends PauseResponse {
  /** The deciding reviewer, or the Slack user who answered from a channel's buttons. */
  responded_by: ReviewerRef | SlackResponder | null;
  votes: Vote[];
}

/** A pause as the API returns it. */
export interface PresentedPause {
  id: string;
  object: 'pause';
  mode: Mode;
  status: PauseStatus;
  title: string;
  body: string | null;
  options: string[];
  allow_text: boolean;
  form: Form | null;
  require_text: string[];
  options_style: Record<string, OptionStyle>;
  expires_at: string;
  timeout_default: string | null;
  metadata: object;
  /** The response page for the human: PUBLIC_BASE_URL/r/{token}; null when the pause has reviewers. */
  response_url: string | null;
  response: PresentedResponse | null;
  notifications: PresentedNotification[];
  reviewers: PresentedReviewer[];
  quorum: number | null;
  veto: string[];
  remind_every: number | null;
  remind_max: number | null;
  escalate: {
    after: number;
    reviewers: Array<{ email: string; name: string | null }>;
    escalated_at: string | null;
  } | null;
  created_at: string;
  updated_at: string;
}

/** The link a human answers this pause through. */
export function responseUrl(services: Pick<ServiceContext, 'publicBaseUrl' | 'keys'>, pauseId: string): string {
  return `${services.publicBaseUrl}/r/${responseToken(services.keys.respondToken, pauseId)}`;
}

export interface PauseParts {
  notifications?: NotificationSummary[];
  reviewers?: ReviewersTable[];
  /** The shared link, when already computed; null for a pause with reviewers. */
  url?: string | null;
}

export function presentPause(
  services: Pick<ServiceContext, 'publicBaseUrl' | 'keys'>,
  pause: Pause,
  parts: PauseParts = {},
): PresentedPause {
  const { status, response } = currentOutcome(pause);
  const reviewers = parts.reviewers ?? [];
  const withReviewers = pause.quorum !== null;
  const votes = withReviewers ? reviewers.flatMap((reviewer) => voteOf(reviewer) ?? []) : [];
  votes.sort((a, b) => (a.voted_at < b.voted_at ? -1 : a.voted_at > b.voted_at ? 1 : 0));
  const decider = reviewers.find((reviewer) => reviewer.id === pause.respondedBy);
  return {
    id: pause.id,
    object: 'pause',
    mode: pause.mode,
    status,
    title: pause.title,
    body: pause.body,
    options: pause.options,
    allow_text: pause.allowText,
    form: pause.form,
    require_text: pause.requireText,
    options_style: pause.optionsStyle,
    expires_at: pause.expiresAt,
    timeout_default: pause.timeoutDefault,
    metadata: pause.metadata,
    response_url: withReviewers ? null : parts.url === undefined ? responseUrl(services, pause.id) : parts.url,
    response: response && {
      ...response,
      responded_by: decider
        ? { id: decider.id, email: decider.email, name: decider.name }
        : (pause.respondedBySlack ?? null),
      votes,
    },
    notifications: (parts.notifications ?? []).map(presentNotification),
    reviewers: reviewers.map((reviewer) => ({
      id: reviewer.id,
      email: reviewer.email,
      name: reviewer.name,
      response_url: reviewerUrl(services, reviewer),
      vote: ownVote(reviewer),
      added_by: reviewer.added_by,
    })),
    quorum: pause.quorum,
    veto: pause.veto,
    remind_every: pause.remindEvery,
    remind_max: pause.remindMax,
    escalate: pause.escalation && { ...pause.escalation, escalated_at: pause.escalatedAt },
    created_at: pause.createdAt,
    updated_at: pause.updatedAt,
  };
}

/** Stored pauses as the API shows them, with their notifications and reviewers (one query each for all). */
export async function presentStoredPauses(
  services: Pick<ServiceContext, 'publicBaseUrl' | 'keys' | 'store'>,
  pauses: Pause[],
): Promise<PresentedPause[]> {
  const notifications = await notificationsOf(services.store, pauses);
  const withReviewers = pauses.filter((pause) => pause.quorum !== null).map((pause) => pause.id);
  const reviewers = await reviewersOf(services.store, withReviewers);
  return pauses.map((pause) =>
    presentPause(services, pause, { notifications: notifications.get(pause.id), reviewers: reviewers.get(pause.id) }),
  );
}

export const presentNotification = (row: NotificationSummary): PresentedNotification => ({
  id: row.id,
  channel: row.channel,
  to: row.recipient,
  status: row.status,
  attempts: Number(row.attempts),
  last_error: row.last_error,
  sent_at: row.status === 'sent' ? row.completed_at : null,
});
