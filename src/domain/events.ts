import type { JsonObject } from './form.js';
import type { Pause, SlackResponder } from './pause.js';

// The webhook envelope (docs/webhooks.md), serialised once: these bytes are stored and
// signed and sent unchanged on every attempt.

/** Every event a pause emits, in webhook subscriptions and the events feed. */
export const EVENT_TYPES = ['pause.responded', 'pause.timed_out', 'pause.cancelled', 'pause.voted'] as const;
export type EventType = (typeof EVENT_TYPES)[number];
/** The events that end a pause: exactly one per pause. */
export type OutcomeEventType = Exclude<EventType, 'pause.voted'>;

/** A recorded event, as the events feed lists it: its payload is the webhook envelope, decoded. */
export interface StoredEvent {
  id: string;
  type: EventType;
  pauseId: string;
  createdAt: string;
  payload: Record<string, unknown>;
}

/** The fields of a pause its events carry. */
export type PauseForEvent = Pick<
  Pause,
  | 'id'
  | 'developerId'
  | 'metadata'
  | 'responseChoice'
  | 'responseText'
  | 'responseAt'
  | 'responseValues'
  | 'responseEdited'
  | 'expiresAt'
>;

export interface ReviewerRef {
  id: string;
  email: string;
  name: string | null;
}

export interface Vote {
  reviewer_id: string;
  email: string;
  choice: string;
  text: string | null;
  /** The vote's own values, when its choice submits the pause's form. */
  values: JsonObject | null;
  voted_at: string;
}

/** On a pause with reviewers, who decided it and every vote counted; added to pause.responded. */
export interface Decision {
  responded_by: ReviewerRef | null;
  votes: Vote[];
}

/** Who answered from a channel's Slack buttons; added to pause.responded of a pause without reviewers. */
export interface SlackAnswer {
  responded_by: SlackResponder;
}

const envelope = (type: EventType, pause: PauseForEvent, timestamp: string, data: Record<string, unknown>) =>
  JSON.stringify({ event: type, pause_id: pause.id, developer_id: pause.developerId, timestamp, data });

export function eventPayload(
  type: OutcomeEventType,
  pause: PauseForEvent,
  timestamp: string,
  decision?: Decision | SlackAnswer,
): string {
  const { metadata } = pause;
  switch (type) {
    case 'pause.responded':
      return envelope(type, pause, timestamp, {
        choice: pause.responseChoice,
        text: pause.responseText,
        response_at: pause.responseAt,
        metadata,
        ...decision,
        // Typed answers (additive, on a pause with a form): the values recorded and whether they differ from the proposed ones.
        ...(pause.responseEdited === null ? {} : { values: pause.responseValues, edited: pause.responseEdited }),
      });
    case 'pause.timed_out':
      return envelope(type, pause, timestamp, {
        choice: pause.responseChoice,
        response_at: pause.responseAt ?? pause.expiresAt,
        metadata,
      });
    case 'pause.cancelled':
      return envelope(type, pause, timestamp, { metadata });
  }
}

/** One reviewer's vote, for webhooks subscribed to pause.voted. */
export function votedPayload(pause: PauseForEvent, reviewer: ReviewerRef, vote: Vote, votesSoFar: number): string {
  const { metadata } = pause;
  return envelope('pause.voted', pause, vote.voted_at, {
    reviewer,
    choice: vote.choice,
    text: vote.text,
    values: vote.values,
    voted_at: vote.voted_at,
    votes_so_far: votesSoFar,
    metadata,
  });
}
