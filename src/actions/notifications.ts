import type { ServiceContext } from '../context.js';
import { isoTime } from '../domain/clock.js';
import { isOverdue } from '../domain/pause.js';
import { ApiError, notFound } from '../errors.js';
import { getNotification, suppressedContentOf } from '../store/notifications.js';
import { getOwnedPause, type Owner } from '../store/pauses.js';
import type { NotificationsTable } from '../store/schema.js';
import type { PresentedNotification } from './present-pause.js';
import { requeueAndWake } from './requeue.js';

// One notification of a developer's pause, for the API
// (GET/POST /v1/pause/{id}/notifications/{notification_id}…) and the console:
// reading it with its rendered content, and sending a failed one again.

/**
 * Whether nobody was told of a pause: it has notifications and every one of
 * them failed. The API shows each status; the console flags such a pause.
 */
export const nobodyTold = (notifications: ReadonlyArray<Pick<PresentedNotification, 'status'>>): boolean =>
  notifications.length > 0 && notifications.every((notification) => notification.status === 'failed');

export interface NotificationPreview {
  subject: string | null;
  to: string;
  text: string;
}

/**
 * What the owner's pause's suppressed notifications would have sent (subject,
 * recipient, plain text), by notification id; none for another owner's pause.
 */
export async function previewSuppressed(
  services: Pick<ServiceContext, 'store'>,
  owner: Owner,
  pauseId: string,
): Promise<Map<string, NotificationPreview>> {
  const { store } = services;
  const pause = await getOwnedPause(store, owner, pauseId);
  if (!pause) return new Map();
  const rows = await suppressedContentOf(store, pause.id);
  return new Map(rows.map((row) => [row.id, { subject: row.subject, to: row.recipient, text: row.text_body }]));
}

/** The owner's pause's notification (404 if the pause is not theirs, or of the other mode). */
export async function readOwnedNotification(
  services: Pick<ServiceContext, 'store'>,
  owner: Owner,
  pauseId: string,
  notificationId: string,
): Promise<NotificationsTable> {
  return (await ownedPauseAndNotification(services, owner, pauseId, notificationId)).notification;
}

async function ownedPauseAndNotification(
  services: Pick<ServiceContext, 'store'>,
  owner: Owner,
  pauseId: string,
  notificationId: string,
) {
  const { store } = services;
  const pause = await getOwnedPause(store, owner, pauseId);
  if (!pause) throw notFound('Pause');
  const notification = await getNotification(store, { pauseId: pause.id, notificationId });
  if (!notification) throw notFound('Notification');
  return { pause, notification };
}

/**
 * Queues a failed notification again (same content, attempts from zero) for
 * the worker to send, as the first time; 404 if it is not the owner's, 409
 * when it has not failed (a suppressed one of a test pause never is) or the
 * pause no longer waits (a question that is closed is not asked again).
 */
export async function resendNotification(
  services: Pick<ServiceContext, 'store' | 'clock'>,
  owner: Owner,
  pauseId: string,
  notificationId: string,
): Promise<NotificationsTable> {
  const { pause, notification: existing } = await ownedPauseAndNotification(services, owner, pauseId, notificationId);
  if (pause.status !== 'pending' || isOverdue(pause, isoTime(services.clock.now()))) {
    throw new ApiError(
      'pause_not_pending',
      'This pause no longer waits for an answer, so its notifications are not sent again.',
    );
  }
  const requeued = await requeueAndWake(services, 'notifications', existing.id);
  if (!requeued) {
    throw new ApiError(
      'notification_not_failed',
      `Only a failed notification can be sent again; this one is ${existing.status}.`,
    );
  }
  // As queued, not read again: a woken worker may already have claimed it.
  return { ...existing, ...requeued };
}
