import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { isoTime } from '../../domain/clock.js';
import { isOverdue } from '../../domain/pause.js';
import { ApiError, notFound } from '../../errors.js';
import { keyHolderOf } from '../../http/auth.js';
import { errorResponses } from '../../http/schemas.js';
import { notificationsOf } from '../../store/notifications.js';
import { getOwnedPause } from '../../store/pauses.js';
import { cancelPause } from '../../store/transitions.js';
import { PauseIdParams, PauseObject, presentPause } from './schemas.js';

export const cancelPauseRoute: FastifyPluginAsyncTypebox = async (app) => {
  const { store, clock, signals } = app.services;

  app.delete(
    '/pause/:id',
    {
      schema: {
        summary: 'Cancel a pending pause; emits pause.cancelled',
        tags: ['pauses'],
        params: PauseIdParams,
        response: { 200: PauseObject, ...errorResponses(401, 404, 409) },
      },
    },
    async (request) => {
      const holder = keyHolderOf(request);
      const owner = { developerId: holder.developerId, mode: holder.mode };
      const cancel = await cancelPause(store, {
        pauseId: request.params.id,
        ...owner,
        now: isoTime(clock.now()),
      });
      if (cancel) {
        const cancelled = cancel.pause;
        signals.changed([cancelled.id], { queued: cancel.queued });
        return presentPause(app, cancelled, (await notificationsOf(store, [cancelled])).get(cancelled.id));
      }
      const existing = await getOwnedPause(store, owner, request.params.id);
      if (!existing) throw notFound('Pause');
      // Still stored as pending but past expires_at: its timeout is being recorded.
      const status = isOverdue(existing, isoTime(clock.now())) ? 'timed_out' : existing.status;
      throw new ApiError('pause_not_pending', `The pause is already ${status.replace('_', ' ')}.`, { status });
    },
  );
};
