import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { cancelOwnedPause } from '../../actions/cancel-pause.js';
import { keyHolderOf } from '../../http/auth.js';
import { errorResponses } from '../../http/schemas.js';
import { PauseIdParams, PauseObject } from './schemas.js';

export const cancelPauseRoute: FastifyPluginAsyncTypebox = async (app) => {
  const services = app.services;

  app.delete(
    '/pause/:id',
    {
      schema: {
        summary: 'Cancel a pause',
        description:
          'Cancels a pending pause and emits `pause.cancelled`; a pause that has ended is `409 pause_not_pending`.',
        tags: ['pauses'],
        params: PauseIdParams,
        response: { 200: PauseObject, ...errorResponses(401, 404, 409) },
      },
    },
    async (request) => {
      const holder = keyHolderOf(request);
      return cancelOwnedPause(services, { developerId: holder.developerId, mode: holder.mode }, request.params.id);
    },
  );
};
