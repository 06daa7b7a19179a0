// The webhook envelope (docs/webhooks.md), serialised once: these bytes are stored and
// signed and sent unchanged on every attempt.

/** Every event a pause emits, in webhook subscriptions and the events feed. */
export const EVENT_TYPES = ['pause.responded', 'pause.timed_out', 'pause.cancelled', 'pause.voted'] as const;
export type EventType = (typeof EVENT_TYPES)[number];
/** The events that end a pause: exactly one per pause. */
export type OutcomeEventType = Exclude<EventType, 'pause.voted'>;

interface PauseForEvent {
  id: string;
  developer_id: string;
  /** The stored JSON object text. */
  metadata: string;
  response_choice: string | null;
  response_text: string | null;
  response_at: string | null;
  expires_at: string;
}

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
  voted_at: string;
}

/** On a pause with reviewers, who decided it and every vote counted; added to pause.responded. */
export interface Decision {
  responded_by: ReviewerRef | null;
  votes: Vote[];
}

const envelope = (type: EventType, pause: PauseForEvent, timestamp: string, data: Record<string, unknown>) =>
  JSON.stringify({ event: type, pause_id: pause.id, developer_id: pause.developer_id, timestamp, data });

export function eventPayload(
  type: OutcomeEventType,
  pause: PauseForEvent,
  timestamp: string,
  decision?: Decision,
): string {
  const metadata = JSON.parse(pause.metadata) as Record<string, unknown>;
  switch (type) {
    case 'pause.responded':
      return envelope(type, pause, timestamp, {
        choice: pause.response_choice,
        text: pause.response_text,
        response_at: pause.response_at,
        metadata,
        ...decision,
      });
    case 'pause.timed_out':
      return envelope(type, pause, timestamp, {
        choice: pause.response_choice,
        response_at: pause.response_at ?? pause.expires_at,
        metadata,
      });
    case 'pause.cancelled':
      return envelope(type, pause, timestamp, { metadata });
  }
}

/** One reviewer's vote, for webhooks subscribed to pause.voted. */
export function votedPayload(pause: PauseForEvent, reviewer: ReviewerRef, vote: Vote, votesSoFar: number): string {
  const metadata = JSON.parse(pause.metadata) as Record<string, unknown>;
  return envelope('pause.voted', pause, vote.voted_at, {
    reviewer,
    choice: vote.choice,
    text: vote.text,
    voted_at: vote.voted_at,
    votes_so_far: votesSoFar,
    metadata,
  });
}
