import type { FastifyInstance } from 'fastify';
import Type from 'typebox';
import { currentOutcome } from '../../domain/pause.js';
import { responseToken } from '../../domain/response-token.js';
import { ModeSchema, Timestamp } from '../../http/schemas.js';
import type { NotificationSummary } from '../../store/notifications.js';
import type { PausesTable } from '../../store/schema.js';
import { presentNotification } from './notify.js';

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

export type PauseObjectType = Type.Static<typeof PauseObject>;

export function responseUrl(app: FastifyInstance, pauseId: string): string {
  return `${app.services.publicBaseUrl}/r/${responseToken(app.services.keys.respondToken, pauseId)}`;
}

/** The pause as the API returns it. */
export function presentPause(
  app: FastifyInstance,
  row: PausesTable,
  notifications: NotificationSummary[] = [],
  url = responseUrl(app, row.id),
): PauseObjectType {
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
