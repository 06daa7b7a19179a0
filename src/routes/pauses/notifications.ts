import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { presentNotification } from '../../actions/present-pause.js';
import { notFound } from '../../errors.js';
import { keyHolderOf } from '../../http/auth.js';
import { errorResponses, Timestamp } from '../../http/schemas.js';
import { getNotification } from '../../store/notifications.js';
import { getOwnedPause } from '../../store/pauses.js';
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

export const notificationRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { store } = app.services;
  app.get(
    '/pause/:id/notifications/:notification_id',
    {
      schema: {
        summary: 'Read a notification',
        description:
          'A notification of a pause (an email or a Slack message), with the subject and bodies rendered for it.',
        tags: ['pauses'],
        params: Type.Object({ id: Type.String({ maxLength: 64 }), notification_id: Type.String({ maxLength: 64 }) }),
        response: { 200: RenderedNotification, ...errorResponses(401, 404) },
      },
    },
    async (request) => {
      const holder = keyHolderOf(request);
      const pause = await getOwnedPause(store, holder, request.params.id);
      if (!pause) throw notFound('Pause');
      const row = await getNotification(store, { pauseId: pause.id, notificationId: request.params.notification_id });
      if (!row) throw notFound('Notification');
      return {
        ...presentNotification(row),
        object: 'notification' as const,
        pause_id: row.pause_id,
        subject: row.subject,
        text: row.text_body,
        html: row.html_body,
        created_at: row.created_at,
      };
    },
  );
};
