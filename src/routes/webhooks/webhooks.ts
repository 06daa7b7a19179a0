import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { isoTime } from '../../domain/clock.js';
import { EVENT_TYPES } from '../../domain/events.js';
import { newId } from '../../domain/ids.js';
import { seal } from '../../domain/sealed.js';
import { ApiError, notFound } from '../../errors.js';
import { keyHolderOf } from '../../http/auth.js';
import { errorResponses } from '../../http/schemas.js';
import { checkWebhookUrl } from '../../net/address-policy.js';
import { deleteWebhook, insertWebhookUnderCap, listWebhooks } from '../../store/webhooks.js';
import { presentWebhook, WebhookIdParams, WebhookObject } from './schemas.js';

export const MAX_WEBHOOKS = 20;
export const MIN_SECRET_LENGTH = 16;

// Types only: the rules themselves are checked in the handler, so each
// failure gets its own code (invalid_webhook_url, invalid_events, invalid_secret).
const RegisterWebhook = Type.Object(
  {
    url: Type.String({ maxLength: 4096, description: 'https:// and public; private addresses are refused.' }),
    events: Type.Array(Type.String({ maxLength: 64 }), { maxItems: 16 }),
    secret: Type.String({ maxLength: 1024, description: 'At least 16 characters; signs every delivery.' }),
  },
  { additionalProperties: false },
);

const WebhookList = Type.Object({
  object: Type.Literal('list'),
  data: Type.Array(WebhookObject),
  has_more: Type.Boolean(),
});

const Deleted = Type.Object({ id: Type.String(), object: Type.Literal('webhook'), deleted: Type.Literal(true) });

export const webhookRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { store, clock, config, keys } = app.services;

  app.post(
    '/webhooks',
    {
      schema: {
        summary: 'Register a webhook for pause events',
        tags: ['webhooks'],
        body: RegisterWebhook,
        response: { 201: WebhookObject, ...errorResponses(400, 401) },
      },
    },
    async (request, reply) => {
      const holder = keyHolderOf(request);
      const { url, events, secret } = request.body;
      if (events.length === 0 || new Set(events).size !== events.length) {
        throw new ApiError('invalid_events', 'events must list one or more event types, each once.');
      }
      const unknown = events.filter((event) => !(EVENT_TYPES as readonly string[]).includes(event));
      if (unknown.length > 0) {
        throw new ApiError(
          'invalid_events',
          `Unknown event types: ${unknown.join(', ')}. Use ${EVENT_TYPES.join(', ')}.`,
        );
      }
      if (secret.length < MIN_SECRET_LENGTH) {
        throw new ApiError('invalid_secret', `secret must be at least ${MIN_SECRET_LENGTH} characters of random data.`);
      }
      const checked = await checkWebhookUrl(url, { allowedNetworks: config.webhookAllowedNetworks });
      if (!checked.ok) throw new ApiError('invalid_webhook_url', checked.reason);

      const row = {
        id: newId('wh'),
        developer_id: holder.developerId,
        mode: holder.mode,
        url: checked.url.toString(),
        events: JSON.stringify(events),
        secret_sealed: seal(keys.atRest, secret),
        created_at: isoTime(clock.now()),
      };
      if (!(await insertWebhookUnderCap(store, row, MAX_WEBHOOKS))) {
        throw new ApiError('invalid_request', `A ${holder.mode} account has at most ${MAX_WEBHOOKS} webhooks.`);
      }
      return reply.code(201).send(presentWebhook(row));
    },
  );

  app.get(
    '/webhooks',
    {
      schema: {
        summary: 'List webhooks',
        tags: ['webhooks'],
        response: { 200: WebhookList, ...errorResponses(401) },
      },
    },
    async (request) => {
      const holder = keyHolderOf(request);
      const rows = await listWebhooks(store, holder);
      return { object: 'list' as const, data: rows.map(presentWebhook), has_more: false };
    },
  );

  app.delete(
    '/webhooks/:webhook_id',
    {
      schema: {
        summary: 'Delete a webhook; its pending deliveries are dropped',
        tags: ['webhooks'],
        params: WebhookIdParams,
        response: { 200: Deleted, ...errorResponses(401, 404) },
      },
    },
    async (request) => {
      const holder = keyHolderOf(request);
      if (!(await deleteWebhook(store, holder, request.params.webhook_id))) throw notFound('Webhook');
      return { id: request.params.webhook_id, object: 'webhook' as const, deleted: true as const };
    },
  );
};
