import Type from 'typebox';
import type { PresentedNotification, PresentedPause } from '../../actions/present-pause.js';
import { ModeSchema, Timestamp } from '../../http/schemas.js';

export const PauseStatusSchema = Type.Union([
  Type.Literal('pending'),
  Type.Literal('responded'),
  Type.Literal('timed_out'),
  Type.Literal('cancelled'),
]);

export const ResponseSchema = Type.Union([
  Type.Object({
    choice: Type.Union([Type.String(), Type.Null()]),
    text: Type.Union([Type.String(), Type.Null()]),
    response_at: Timestamp,
  }),
  Type.Null(),
]);

/** A notification as listed on its pause. */
export const NotificationFields = {
  id: Type.String(),
  channel: Type.Union([Type.Literal('email'), Type.Literal('slack')]),
  to: Type.String({ description: 'The address, or the Slack URL with its secret part hidden.' }),
  status: Type.Union([
    Type.Literal('pending'),
    Type.Literal('sent'),
    Type.Literal('failed'),
    Type.Literal('suppressed'),
  ]),
  attempts: Type.Integer(),
  last_error: Type.Union([Type.String(), Type.Null()]),
  sent_at: Type.Union([Timestamp, Type.Null()]),
};
const NotificationSchema = Type.Object(NotificationFields);

export const PauseIdParams = Type.Object({ id: Type.String({ maxLength: 64 }) });

export const PauseObject = Type.Object({
  id: Type.String(),
  object: Type.Literal('pause'),
  mode: ModeSchema,
  status: PauseStatusSchema,
  title: Type.String(),
  body: Type.Union([Type.String(), Type.Null()]),
  options: Type.Array(Type.String()),
  allow_text: Type.Boolean(),
  expires_at: Timestamp,
  timeout_default: Type.Union([Type.String(), Type.Null()]),
  metadata: Type.Object({}, { additionalProperties: true }),
  response_url: Type.String({ description: 'The response page for the human: PUBLIC_BASE_URL/r/{token}' }),
  response: ResponseSchema,
  notifications: Type.Array(NotificationSchema),

  created_at: Timestamp,
  updated_at: Timestamp,
});

// The objects the actions present and these schemas describe the same JSON:
// the type check fails when one changes without the other.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Holds<T extends true> = T;
export type PauseObjectMatchesAction = Holds<Same<Type.Static<typeof PauseObject>, PresentedPause>>;
export type NotificationMatchesAction = Holds<Same<Type.Static<typeof NotificationSchema>, PresentedNotification>>;
