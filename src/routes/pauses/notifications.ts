import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { readOwnedNotification, resendNotification } from '../../actions/notifications.js';
import { presentNotification } from '../../actions/present-pause.js';
import { MAX_ID_LENGTH } from '../../domain/ids.js';
import { keyHolderOf } from '../../http/auth.js';
import { errorResponses, Timestamp } from '../../http/schemas.js';
import { NotificationFields } from './schemas.js';

// One notification of a pause with its rendered content: in test mode, where
// nothing is sent, this is how a developer sees what would have gone out.

const RenderedNotification = Type.Object({
  ...NotificationFields,
  object: Type.Literal('notification'),
  pause_id: Type.String(),
  subject: Type.Union([Type.String(), Type.Null()], { description: 'Email subject; null for Slack.' }),
  text: Type.String({ description: "The email's plain-text part, or the Slack message as JSON." }),
  html: Type.Union([Type.String(), Type.Null()], { description: "The email's HTML part; null for Slack." }),
  created_at: Timestamp,
});

const NotificationParams = Type.Object({
  id: Type.String({ maxLength: MAX_ID_LENGTH }),
  notification_id: Type.String({ maxLength: MAX_ID_LENGTH }),
});

export const notificationRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/pause/:id/notifications/:notification_id',
    {
      schema: {
        summary: 'Read a notification',
        description:
          'A notification of a pause (an email or a Slack message), with the subject and bodies rendered for it.',
        tags: ['pauses'],
        params: NotificationParams,
        response: { 200: RenderedNotification, ...errorResponses(401, 404) },
      },
    },
    async (request) => {
      const { id, notification_id } = request.params;
      const row = await readOwnedNotification(app.services, keyHolderOf(request), id, notification_id);
      return {
        ...presentNotification(row),
        object: 'notification' as const,
        // Found by this pause.
        pause_id: id,
        subject: row.subject,
        text: row.text_body,
        html: row.html_body,
        created_at: row.created_at,
      };
    },
  );

  app.post(
    '/pause/:id/notifications/:notification_id/retry',
    {
      schema: {
        summary: 'Send a failed notification again',
        description:
          "Queues a `failed` notification again, with the same content and its attempts from zero; the worker sends it as the first time (and retries on the usual schedule). Any other status is a 409 `notification_not_failed`: a test pause's `suppressed` notifications are never sent. A pause that no longer waits (answered, expired, cancelled) is a 409 `pause_not_pending`.",
        tags: ['pauses'],
        params: NotificationParams,
        response: { 200: Type.Object(NotificationFields), ...errorResponses(401, 404, 409) },
      },
    },
    async (request) => {
      const { id, notification_id } = request.params;
      return presentNotification(await resendNotification(app.services, keyHolderOf(request), id, notification_id));
    },
  );
};
