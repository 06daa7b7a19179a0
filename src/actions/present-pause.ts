import type { ServiceContext } from '../context.js';
import type { ReviewerRef, Vote } from '../domain/events.js';
import type { Mode } from '../domain/keys.js';
import { currentOutcome, type PauseResponse } from '../domain/pause.js';
import { responseToken } from '../domain/response-token.js';
import { type NotificationSummary, notificationsOf } from '../store/notifications.js';
import { type OwnVote, ownVote, reviewersOf, voteOf } from '../store/reviewers.js';
import type { NotificationsTable, PausesTable, ReviewersTable } from '../store/schema.js';
import { reviewerUrl } from './plan-notifications.js';
import type { StoredEscalation } from './plan-reviewers.js';

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
  responded_by: ReviewerRef | null;
  votes: Vote[];
}

/** A pause as the API returns it. */
export interface PresentedPause {
  id: string;
  object: 'pause';
  mode: Mode;
  status: PausesTable['status'];
  title: string;
  body: string | null;
  options: string[];
  allow_text: boolean;
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
  row: PausesTable,
  parts: PauseParts = {},
): PresentedPause {
  const { status, response } = currentOutcome(row);
  const reviewers = parts.reviewers ?? [];
  const withReviewers = row.quorum !== null;
  const votes = withReviewers ? reviewers.flatMap((reviewer) => voteOf(reviewer) ?? []) : [];
  votes.sort((a, b) => (a.voted_at < b.voted_at ? -1 : a.voted_at > b.voted_at ? 1 : 0));
  const decider = reviewers.find((reviewer) => reviewer.id === row.responded_by);
  const escalation = row.escalate ? (JSON.parse(row.escalate) as StoredEscalation) : null;
  return {
    id: row.id,
    object: 'pause',
    mode: row.mode,
    status,
    title: row.title,
    body: row.body,
    options: JSON.parse(row.options),
    allow_text: row.allow_text === 1,
    expires_at: row.expires_at,
    timeout_default: row.timeout_default,
    metadata: JSON.parse(row.metadata),
    response_url: withReviewers ? null : parts.url === undefined ? responseUrl(services, row.id) : parts.url,
    response: response && {
      ...response,
      responded_by: decider ? { id: decider.id, email: decider.email, name: decider.name } : null,
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
    quorum: row.quorum,
    veto: row.veto ? JSON.parse(row.veto) : [],
    remind_every: row.remind_every,
    remind_max: row.remind_max,
    escalate: escalation && { ...escalation, escalated_at: row.escalated_at },
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/** Stored pauses as the API shows them, with their notifications and reviewers (one query each for all). */
export async function presentStoredPauses(
  services: Pick<ServiceContext, 'publicBaseUrl' | 'keys' | 'store'>,
  rows: PausesTable[],
): Promise<PresentedPause[]> {
  const notifications = await notificationsOf(services.store, rows);
  const withReviewers = rows.filter((row) => row.quorum !== null).map((row) => row.id);
  const reviewers = await reviewersOf(services.store, withReviewers);
  return rows.map((row) =>
    presentPause(services, row, { notifications: notifications.get(row.id), reviewers: reviewers.get(row.id) }),
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
