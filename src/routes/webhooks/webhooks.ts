import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import {
  enableOwnedWebhook,
  listOwnedWebhooks,
  RecoverInput,
  RegisterWebhookInput,
  recoverOwnedWebhook,
  registerWebhook,
  removeOwnedWebhook,
  rotateOwnedWebhookSecret,
} from '../../actions/webhooks.js';
import { formatSeconds } from '../../domain/units.js';
import { ROTATION_OVERLAP_MS } from '../../domain/webhooks.js';
import { keyHolderOf } from '../../http/auth.js';
import { errorResponses } from '../../http/schemas.js';
import { presentWebhook, WebhookIdParams, WebhookObject } from './schemas.js';

/** How long a rotated-out secret still signs, as people read it. */
const OVERLAP = formatSeconds(ROTATION_OVERLAP_MS / 1000);

const WebhookList = Type.Object({
  object: Type.Literal('list'),
  data: Type.Array(WebhookObject),
  has_more: Type.Boolean(),
});

const RotatedSecret = Type.Object({
  ...WebhookObject.properties,
  secret: Type.String({ description: 'The new signing secret (`whsec_…`), shown this once.' }),
  previous_secret_expires_at: Type.String({
    format: 'date-time',
    description: `Until then the previous secret signs every delivery too (${OVERLAP}).`,
  }),
});

const Recovered = Type.Object({
  object: Type.Literal('recovery'),
  webhook_id: Type.String(),
  requeued: Type.Integer({ description: 'Failed deliveries in the window queued again.' }),
  added: Type.Integer({ description: 'Deliveries made for events the webhook missed (while disabled).' }),
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

  app.post(
    '/webhooks/:webhook_id/rotate-secret',
    {
      schema: {
        summary: 'Rotate a webhook’s secret',
        description: `Gives the webhook a new random secret, answered this once. For ${OVERLAP} every delivery is signed with both: \`webhook-signature\` carries both signatures (space-separated), \`X-Service-Signature\` the new one. Rotating again within the ${OVERLAP} drops the oldest, so at most two secrets are valid.`,
        tags: ['webhooks'],
        params: WebhookIdParams,
        response: { 200: RotatedSecret, ...errorResponses(401, 404) },
      },
    },
    async (request) => {
      const rotated = await rotateOwnedWebhookSecret(app.services, keyHolderOf(request), request.params.webhook_id);
      return {
        ...presentWebhook(rotated.webhook),
        secret: rotated.secret,
        previous_secret_expires_at: rotated.previousSecretExpiresAt,
      };
    },
  );

  app.post(
    '/webhooks/:webhook_id/enable',
    {
      schema: {
        summary: 'Enable a disabled webhook',
        description:
          'Turns a disabled webhook back on: new events are delivered again. What it missed is delivered by `recover`.',
        tags: ['webhooks'],
        params: WebhookIdParams,
        response: { 200: WebhookObject, ...errorResponses(401, 404) },
      },
    },
    async (request) =>
      presentWebhook(await enableOwnedWebhook(app.services, keyHolderOf(request), request.params.webhook_id)),
  );

  app.post(
    '/webhooks/:webhook_id/recover',
    {
      schema: {
        summary: 'Recover a webhook’s missed deliveries',
        description:
          'For the events made from `since` until `until` (now when left out): re-queues the failed deliveries and delivers the events missed while the webhook was disabled, once each however often it is called. 400 naming the field for a bad window; 409 `webhook_disabled` while it is disabled.',
        tags: ['webhooks'],
        params: WebhookIdParams,
        body: RecoverInput,
        response: { 200: Recovered, ...errorResponses(400, 401, 404, 409) },
      },
    },
    async (request) => {
      const recovered = await recoverOwnedWebhook(
        app.services,
        keyHolderOf(request),
        request.params.webhook_id,
        request.body,
      );
      return { object: 'recovery' as const, webhook_id: request.params.webhook_id, ...recovered };
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
