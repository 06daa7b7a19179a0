import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { listWebhookDeliveries, readWebhookDelivery, redeliver } from '../../actions/webhooks.js';
import { MAX_ID_LENGTH } from '../../domain/ids.js';
import { formatBytes } from '../../domain/units.js';
import { MAX_ATTEMPT_RESPONSE_BYTES } from '../../domain/webhooks.js';
import { keyHolderOf } from '../../http/auth.js';
import { errorResponses } from '../../http/schemas.js';
import {
  DeliveryObject,
  DeliveryWithAttemptsObject,
  presentDelivery,
  presentDeliveryWithAttempts,
  WebhookIdParams,
} from './schemas.js';

const DeliveryParams = Type.Object({
  webhook_id: Type.String({ maxLength: MAX_ID_LENGTH }),
  delivery_id: Type.String({ maxLength: MAX_ID_LENGTH }),
});

const DeliveryList = Type.Object({
  object: Type.Literal('list'),
  data: Type.Array(DeliveryObject),
  has_more: Type.Boolean(),
});

export const deliveryRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/webhooks/:webhook_id/deliveries',
    {
      schema: {
        summary: 'List a webhook’s deliveries',
        description: 'A webhook’s deliveries, newest first, a page at a time (`limit`, `starting_after`).',
        tags: ['webhooks'],
        params: WebhookIdParams,
        querystring: Type.Object(
          {
            limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
            starting_after: Type.Optional(Type.String({ maxLength: MAX_ID_LENGTH })),
          },
          { additionalProperties: false },
        ),
        response: { 200: DeliveryList, ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      const { rows, hasMore } = await listWebhookDeliveries(
        app.services,
        keyHolderOf(request),
        request.params.webhook_id,
        { limit: request.query.limit ?? 20, startingAfter: request.query.starting_after },
      );
      return { object: 'list' as const, data: rows.map(presentDelivery), has_more: hasMore };
    },
  );

  app.get(
    '/webhooks/:webhook_id/deliveries/:delivery_id',
    {
      schema: {
        summary: 'Get a delivery and its attempts',
        description: `One delivery with every attempt kept of it (\`attempts\`, oldest first: when, how long, the status code, the first ${formatBytes(MAX_ATTEMPT_RESPONSE_BYTES)} of the answer, the error), for \`WEBHOOK_ATTEMPT_RETENTION\`.`,
        tags: ['webhooks'],
        params: DeliveryParams,
        response: { 200: DeliveryWithAttemptsObject, ...errorResponses(401, 404) },
      },
    },
    async (request) => {
      const { webhook_id, delivery_id } = request.params;
      return presentDeliveryWithAttempts(
        await readWebhookDelivery(app.services, keyHolderOf(request), webhook_id, delivery_id),
      );
    },
  );

  app.post(
    '/webhooks/:webhook_id/deliveries/:delivery_id/retry',
    {
      schema: {
        summary: 'Redeliver a failed delivery',
        description:
          'Re-queues a failed delivery and answers it as re-queued: status `pending`, attempts 0, next_attempt_at now, completed_at null (the last status code and error kept). The workers are woken at once, so the delivery may already have been sent when the answer arrives; list the deliveries to follow it. 409 `delivery_not_failed` for a delivery that has not failed, `webhook_disabled` while its webhook is disabled.',
        tags: ['webhooks'],
        params: DeliveryParams,
        response: { 200: DeliveryObject, ...errorResponses(401, 404, 409) },
      },
    },
    async (request) => {
      const { webhook_id, delivery_id } = request.params;
      return presentDelivery(await redeliver(app.services, keyHolderOf(request), webhook_id, delivery_id));
    },
  );
};
