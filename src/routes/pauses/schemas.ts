import Type from 'typebox';
import type { PresentedNotification, PresentedPause, PresentedReviewer } from '../../actions/present-pause.js';
import type { JsonObject } from '../../domain/form.js';
import { MAX_ID_LENGTH } from '../../domain/ids.js';
import { ModeSchema, Timestamp } from '../../http/schemas.js';

export const PauseStatusSchema = Type.Union([
  Type.Literal('pending'),
  Type.Literal('responded'),
  Type.Literal('timed_out'),
  Type.Literal('cancelled'),
]);

const Nullable = <T extends Type.TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** A JSON object whose fields a form's schema names (or, for `schema`, the schema itself). */
const JsonObjectSchema = (description?: string) =>
  Type.Unsafe<JsonObject>(Type.Object({}, { additionalProperties: true, ...(description ? { description } : {}) }));

/** A form's values: an object whose fields the form's schema names. */
const ValuesSchema = Nullable(JsonObjectSchema());

/** A pause's form (DESIGN.md, "Typed answers"), as the pause and its response link show it. */
export const FormSchema = Nullable(
  Type.Object(
    {
      schema: JsonObjectSchema('The JSON Schema the values must meet.'),
      values: ValuesSchema,
      on: Type.Array(Type.String(), { description: 'The options that submit the form.' }),
    },
    { description: 'The form the answer fills in; null for a pause without.' },
  ),
);

/** Typed answers' fields of a question, on the pause and on its response link. */
export const TypedAnswerFields = {
  form: FormSchema,
  require_text: Type.Array(Type.String(), { description: 'Options that need a written reason.' }),
  options_style: Type.Record(Type.String(), Type.Union([Type.Literal('primary'), Type.Literal('danger')]), {
    description: 'How each option the developer marked is shown; the others look alike.',
  }),
};

/** An answer's values, and whether they differ from the proposed ones. */
export const AnswerValuesFields = {
  values: ValuesSchema,
  edited: Type.Boolean({ description: 'True when the values differ from the proposed ones.' }),
};

/** The outcome as the human-facing API shows it: no names, no votes. */
export const ResponseSchema = Nullable(
  Type.Object({
    choice: Nullable(Type.String()),
    text: Nullable(Type.String()),
    ...AnswerValuesFields,
    response_at: Timestamp,
  }),
);

export const ReviewerRefSchema = Type.Object({
  id: Type.String(),
  email: Type.String(),
  name: Nullable(Type.String()),
});

/** Who answered a pause posted to a Slack channel, from its buttons. */
export const SlackResponderSchema = Type.Object({
  slack_user_id: Type.String(),
  email: Nullable(Type.String()),
  name: Type.String(),
});

export const VoteSchema = Type.Object({
  reviewer_id: Type.String(),
  email: Type.String(),
  choice: Type.String(),
  text: Nullable(Type.String()),
  values: ValuesSchema,
  voted_at: Timestamp,
});

/** The outcome as the developer sees it: on a pause with reviewers, who decided it and every vote. */
const DeveloperResponseSchema = Nullable(
  Type.Object({
    choice: Nullable(Type.String()),
    text: Nullable(Type.String()),
    ...AnswerValuesFields,
    response_at: Timestamp,
    responded_by: Nullable(Type.Union([ReviewerRefSchema, SlackResponderSchema])),
    votes: Type.Array(VoteSchema),
  }),
);

export const OwnVoteSchema = Nullable(
  Type.Object({ choice: Type.String(), text: Nullable(Type.String()), values: ValuesSchema, voted_at: Timestamp }),
);

const ReviewerSchema = Type.Object({
  id: Type.String(),
  email: Type.String(),
  name: Nullable(Type.String()),
  response_url: Type.String({ description: "This reviewer's own link: PUBLIC_BASE_URL/r/{token}." }),
  vote: OwnVoteSchema,
  added_by: Type.Union([Type.Literal('create'), Type.Literal('escalation')]),
});

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

export const PauseIdParams = Type.Object({ id: Type.String({ maxLength: MAX_ID_LENGTH }) });

export const PauseObject = Type.Object({
  id: Type.String(),
  object: Type.Literal('pause'),
  mode: ModeSchema,
  status: PauseStatusSchema,
  title: Type.String(),
  body: Type.Union([Type.String(), Type.Null()]),
  options: Type.Array(Type.String()),
  allow_text: Type.Boolean(),
  ...TypedAnswerFields,
  expires_at: Timestamp,
  timeout_default: Type.Union([Type.String(), Type.Null()]),
  metadata: Type.Object({}, { additionalProperties: true }),
  response_url: Nullable(
    Type.String({
      description: 'The response page for the human: PUBLIC_BASE_URL/r/{token}; null when the pause has reviewers.',
    }),
  ),
  response: DeveloperResponseSchema,
  notifications: Type.Array(NotificationSchema),
  reviewers: Type.Array(ReviewerSchema, { description: 'The named reviewers; empty for a pause without.' }),
  quorum: Nullable(Type.Integer()),
  veto: Type.Array(Type.String()),
  remind_every: Nullable(Type.Integer()),
  remind_max: Nullable(Type.Integer()),
  escalate: Nullable(
    Type.Object({
      after: Type.Integer(),
      reviewers: Type.Array(Type.Object({ email: Type.String(), name: Nullable(Type.String()) })),
      escalated_at: Nullable(Timestamp),
    }),
  ),

  created_at: Timestamp,
  updated_at: Timestamp,
});

// The objects the actions present and these schemas describe the same JSON:
// the type check fails when one changes without the other.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Holds<T extends true> = T;
export type PauseObjectMatchesAction = Holds<Same<Type.Static<typeof PauseObject>, PresentedPause>>;
export type NotificationMatchesAction = Holds<Same<Type.Static<typeof NotificationSchema>, PresentedNotification>>;
export type ReviewerMatchesAction = Holds<Same<Type.Static<typeof ReviewerSchema>, PresentedReviewer>>;
