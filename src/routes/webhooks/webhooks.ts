import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { listOwnedWebhooks, registerWebhook, removeOwnedWebhook } from '../../actions/webhooks.js';
import { keyHolderOf } from '../../http/auth.js';
import { errorResponses } from '../../http/schemas.js';
import { presentWebhook, WebhookIdParams, WebhookObject } from './schemas.js';

// Types only: the rules themselves are checked in registerWebhook, so each
// failure gets its own code (invalid_webhook_url, invalid_events, invalid_secret).
const RegisterWebhook = Type.Object(
  {
    url: Type.String({
      maxLength: 4096,
      description:
        'https:// and public; private addresses are refused, except networks in WEBHOOK_ALLOWED_NETWORKS. localhost stands for 127.0.0.1 and ::1 (never looked up) and is admitted when the allowlist admits either.',
    }),
    events: Type.Array(Type.String({ maxLength: 64 }), { maxItems: 16 }),
    secret: Type.String({ maxLength: 1024, description: 'At least 16 characters; signs every delivery.' }),
  },
  {
    additionalProperties: false,
    examples: [
      {
        url: 'https://hooks.example.com/pausepoint',
        events: ['pause.responded', 'pause.timed_out', 'pause.cancelled'],
        secret: 'whsec_6f1d0c9b2a7e4f58b3c1d2e9',
      },
    ],
  },
);

const WebhookList = Type.Object({
  object: Type.Literal('list'),
  data: Type.Array(WebhookObject),
  has_more: Type.Boolean(),
});

const Deleted = Type.Object({ id: Type.String(), object: Type.Literal('webhook'), deleted: Type.Literal(true) });

export const webhookRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/webhooks',
    {
      schema: {
        summary: 'Register a webhook',
        description:
          'Subscribes an https URL on a public address to pause events; every delivery is signed with `secret`.',
        tags: ['webhooks'],
        body: RegisterWebhook,
        response: { 201: WebhookObject, ...errorResponses(400, 401) },
      },
    },
    async (request, reply) => {
      const webhook = await registerWebhook(app.services, keyHolderOf(request), request.body);
      return reply.code(201).send(presentWebhook(webhook));
    },
  );

  app.get(
    '/webhooks',
    {
      schema: {
        summary: 'List webhooks',
        description: 'The webhooks of this key’s mode, with their URLs and event types (never their secrets).',
        tags: ['webhooks'],
        response: { 200: WebhookList, ...errorResponses(401) },
      },
    },
    async (request) => {
      const rows = await listOwnedWebhooks(app.services, keyHolderOf(request));
      return { object: 'list' as const, data: rows.map(presentWebhook), has_more: false };
    },
  );

  app.delete(
    '/webhooks/:webhook_id',
    {
      schema: {
        summary: 'Delete a webhook',
        description: 'Deletes a webhook; its pending deliveries are dropped.',
        tags: ['webhooks'],
        params: WebhookIdParams,
        response: { 200: Deleted, ...errorResponses(401, 404) },
      },
    },
    async (request) => {
      await removeOwnedWebhook(app.services, keyHolderOf(request), request.params.webhook_id);
      return { id: request.params.webhook_id, object: 'webhook' as const, deleted: true as const };
    },
  );
};
