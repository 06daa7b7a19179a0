import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import {
  listOwnedWebhooks,
  RegisterWebhookInput,
  registerWebhook,
  removeOwnedWebhook,
} from '../../actions/webhooks.js';
import { keyHolderOf } from '../../http/auth.js';
import { errorResponses } from '../../http/schemas.js';
import { presentWebhook, WebhookIdParams, WebhookObject } from './schemas.js';

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
        body: RegisterWebhookInput,
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
