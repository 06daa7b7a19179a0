import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { isoTime } from '../../domain/clock.js';
import type { Mode } from '../../domain/keys.js';
import { ApiError, notFound } from '../../errors.js';
import { keyHolderOf, type Principal } from '../../http/auth.js';
import { errorResponses } from '../../http/schemas.js';
import { getDelivery, listDeliveries } from '../../store/deliveries.js';
import { announceQueued, requeueFailed } from '../../store/outbox.js';
import { isOwnedWebhook } from '../../store/webhooks.js';
import { DeliveryObject, presentDelivery, WebhookIdParams } from './schemas.js';

const DeliveryList = Type.Object({
  object: Type.Literal('list'),
  data: Type.Array(DeliveryObject),
  has_more: Type.Boolean(),
});

export const deliveryRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { store, clock, signals } = app.services;

  async function requireWebhook(holder: Principal & { mode: Mode }, webhookId: string) {
    if (!(await isOwnedWebhook(store, holder, webhookId))) throw notFound('Webhook');
  }

  app.get(
    '/webhooks/:webhook_id/deliveries',
    {
      schema: {
        summary: "A webhook's deliveries, newest first",
        tags: ['webhooks'],
        params: WebhookIdParams,
        querystring: Type.Object(
          {
            limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
            starting_after: Type.Optional(Type.String({ maxLength: 64 })),
          },
          { additionalProperties: false },
        ),
        response: { 200: DeliveryList, ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      const holder = keyHolderOf(request);
      await requireWebhook(holder, request.params.webhook_id);
      const { rows, hasMore } = await listDeliveries(store, {
        webhookId: request.params.webhook_id,
        limit: request.query.limit ?? 20,
        startingAfter: request.query.starting_after,
      });
      return { object: 'list' as const, data: rows.map(presentDelivery), has_more: hasMore };
    },
  );

  app.post(
    '/webhooks/:webhook_id/deliveries/:delivery_id/retry',
    {
      schema: {
        summary: 'Send a failed delivery again (same body, same signature)',
        tags: ['webhooks'],
        params: Type.Object({
          webhook_id: Type.String({ maxLength: 64 }),
          delivery_id: Type.String({ maxLength: 64 }),
        }),
        response: { 200: DeliveryObject, ...errorResponses(401, 404, 409) },
      },
    },
    async (request) => {
      const holder = keyHolderOf(request);
      const { webhook_id, delivery_id } = request.params;
      await requireWebhook(holder, webhook_id);
      const find = () => getDelivery(store, { webhookId: webhook_id, deliveryId: delivery_id });
      const existing = await find();
      if (!existing) throw notFound('Delivery');
      if (!(await requeueFailed(store, 'deliveries', delivery_id, isoTime(clock.now())))) {
        throw new ApiError(
          'delivery_not_failed',
          `Only a failed delivery can be retried; this one is ${existing.status}.`,
        );
      }
      await announceQueued(store);
      signals.queued();
      const requeued = await find();
      if (!requeued) throw notFound('Delivery');
      return presentDelivery(requeued);
    },
  );
};
