import type { ServiceContext } from '../context.js';
import { notFound } from '../errors.js';
import { outcomeEventOf } from '../store/events.js';
import { notificationsOf } from '../store/notifications.js';
import { getOwnedPause, type Owner } from '../store/pauses.js';
import { ownVote, reviewersOf } from '../store/reviewers.js';

// A pause's audit record: who did what and when, from creation to outcome.
// Every entry is read from a fact written once and never changed: the
// pause's creation, each notification's creation and final result, each
// reviewer's addition and vote, the escalation, and the outcome's event.

export const TIMELINE_TYPES = [
  'created',
  'escalated',
  'reminded',
  'notified',
  'notification_failed',
  'voted',
  'responded',
  'timed_out',
  'cancelled',
] as const;
export type TimelineType = (typeof TIMELINE_TYPES)[number];

export interface TimelineActor {
  type: 'developer' | 'reviewer' | 'system';
  email?: string;
}

export interface TimelineEntry {
  at: string;
  type: TimelineType;
  actor: TimelineActor;
  detail: Record<string, unknown>;
}

const SYSTEM: TimelineActor = { type: 'system' };

export async function pauseTimeline(
  services: Pick<ServiceContext, 'store'>,
  owner: Owner,
  pauseId: string,
): Promise<TimelineEntry[]> {
  const { store } = services;
  const pause = await getOwnedPause(store, owner, pauseId);
  if (!pause) throw notFound('Pause');
  const [notifications, reviewers, outcome] = await Promise.all([
    notificationsOf(store, [pause]).then((byPause) => byPause.get(pause.id) ?? []),
    reviewersOf(store, [pause.id]).then((byPause) => byPause.get(pause.id) ?? []),
    outcomeEventOf(store, pause.id),
  ]);
  const entries: TimelineEntry[] = [
    {
      at: pause.createdAt,
      type: 'created',
      actor: { type: 'developer' },
      detail: { reviewers: reviewers.filter((r) => r.added_by === 'create').length, quorum: pause.quorum },
    },
  ];
  const escalated = reviewers.filter((r) => r.added_by === 'escalation');
  if (pause.escalatedAt !== null) {
    entries.push({
      at: pause.escalatedAt,
      type: 'escalated',
      actor: SYSTEM,
      detail: { reviewers: escalated.map((r) => ({ id: r.id, email: r.email, name: r.name })) },
    });
  }
  for (const notification of notifications) {
    const about = {
      notification_id: notification.id,
      channel: notification.channel,
      to: notification.recipient,
      ...(notification.reviewer_id ? { reviewer_id: notification.reviewer_id } : {}),
      kind: notification.kind,
    };
    if (notification.kind === 'reminder')
      entries.push({ at: notification.created_at, type: 'reminded', actor: SYSTEM, detail: about });
    if (notification.status === 'suppressed')
      entries.push({
        at: notification.created_at,
        type: 'notified',
        actor: SYSTEM,
        detail: { ...about, status: 'suppressed' },
      });
    else if (notification.status === 'sent' && notification.completed_at)
      entries.push({
        at: notification.completed_at,
        type: 'notified',
        actor: SYSTEM,
        detail: { ...about, status: 'sent' },
      });
    else if (notification.status === 'failed' && notification.completed_at)
      entries.push({
        at: notification.completed_at,
        type: 'notification_failed',
        actor: SYSTEM,
        detail: { ...about, error: notification.last_error },
      });
  }
  for (const reviewer of reviewers) {
    if (reviewer.voted_at === null) continue;
    const vote = ownVote(reviewer);
    entries.push({
      at: reviewer.voted_at,
      type: 'voted',
      actor: { type: 'reviewer', email: reviewer.email },
      detail: {
        reviewer_id: reviewer.id,
        choice: reviewer.vote_choice,
        text: reviewer.vote_text,
        values: vote?.values ?? null,
      },
    });
  }
  if (outcome) {
    const decider = reviewers.find((r) => r.id === pause.respondedBy);
    switch (outcome.type) {
      case 'pause.responded':
        entries.push({
          at: outcome.created_at,
          type: 'responded',
          actor: decider ? { type: 'reviewer', email: decider.email } : { type: 'reviewer' },
          detail: {
            choice: pause.responseChoice,
            text: pause.responseText,
            values: pause.responseValues,
            edited: pause.responseEdited === true,
            ...(decider ? { reviewer_id: decider.id } : {}),
          },
        });
        break;
      case 'pause.timed_out':
        entries.push({
          at: pause.expiresAt,
          type: 'timed_out',
          actor: SYSTEM,
          detail: { choice: pause.responseChoice },
        });
        break;
      case 'pause.cancelled':
        entries.push({ at: outcome.created_at, type: 'cancelled', actor: { type: 'developer' }, detail: {} });
        break;
    }
  }
  // In time order; at the same instant, in the order things happen (a vote before the outcome it decides).
  const rank = (type: TimelineType) => TIMELINE_TYPES.indexOf(type);
  return entries.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : rank(a.type) - rank(b.type)));
}
