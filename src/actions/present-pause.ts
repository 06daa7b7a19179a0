import type { ServiceContext } from '../context.js';
import type { Mode } from '../domain/keys.js';
import { currentOutcome, type PauseView } from '../domain/pause.js';
import { responseToken } from '../domain/response-token.js';
import type { NotificationSummary } from '../store/notifications.js';
import type { NotificationsTable, PausesTable } from '../store/schema.js';

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

/** A pause as the API returns it. */
export interface PresentedPause extends PauseView {
  id: string;
  object: 'pause';
  mode: Mode;
  title: string;
  body: string | null;
  options: string[];
  allow_text: boolean;
  expires_at: string;
  timeout_default: string | null;
  metadata: object;
  /** The response page for the human: PUBLIC_BASE_URL/r/{token}. */
  response_url: string;
  notifications: PresentedNotification[];
  created_at: string;
  updated_at: string;
}

/** The link a human answers this pause through. */
export function responseUrl(services: Pick<ServiceContext, 'publicBaseUrl' | 'keys'>, pauseId: string): string {
  return `${services.publicBaseUrl}/r/${responseToken(services.keys.respondToken, pauseId)}`;
}

export function presentPause(
  services: Pick<ServiceContext, 'publicBaseUrl' | 'keys'>,
  row: PausesTable,
  notifications: NotificationSummary[] = [],
  url = responseUrl(services, row.id),
): PresentedPause {
  const { status, response } = currentOutcome(row);
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
    response_url: url,
    response,
    notifications: notifications.map(presentNotification),
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
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
