// The webhook envelope (README, API reference › Webhooks), serialised once: these bytes are stored and
// signed and sent unchanged on every attempt.

/** Every event a pause emits, in webhook subscriptions and the events feed. */
export const EVENT_TYPES = ['pause.responded', 'pause.timed_out', 'pause.cancelled'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

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

export function eventPayload(type: EventType, pause: PauseForEvent, timestamp: string): string {
  const metadata = JSON.parse(pause.metadata) as Record<string, unknown>;
  let data: Record<string, unknown>;
  switch (type) {
    case 'pause.responded':
      data = { choice: pause.response_choice, text: pause.response_text, response_at: pause.response_at, metadata };
      break;
    case 'pause.timed_out':
      data = { choice: pause.response_choice, response_at: pause.response_at ?? pause.expires_at, metadata };
      break;
    case 'pause.cancelled':
      data = { metadata };
      break;
  }
  return JSON.stringify({ event: type, pause_id: pause.id, developer_id: pause.developer_id, timestamp, data });
}
