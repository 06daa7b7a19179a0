import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { longPoll, MAX_WAIT_SECONDS } from '../../actions/long-poll.js';
import { type PresentedPause, presentStoredPauses } from '../../actions/present-pause.js';
import { isoTime } from '../../domain/clock.js';
import { currentOutcome } from '../../domain/pause.js';
import { notFound } from '../../errors.js';
import { keyHolderOf } from '../../http/auth.js';
import { errorResponses } from '../../http/schemas.js';
import { getOwnedPause, listPauses, type Owner } from '../../store/pauses.js';
import { PauseIdParams, PauseObject, PauseStatusSchema } from './schemas.js';

const PauseList = Type.Object({
  object: Type.Literal('list'),
  data: Type.Array(PauseObject),
  has_more: Type.Boolean(),
});

export const readPauseRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const services = app.services;
  const { store, clock, signals } = services;

  app.get(
    '/pause/:id',
    {
      schema: {
        summary: 'Read a pause; with ?wait=N, wait up to N seconds for it to leave pending',
        tags: ['pauses'],
        params: PauseIdParams,
        querystring: Type.Object(
          { wait: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_WAIT_SECONDS })) },
          { additionalProperties: false },
        ),
        response: { 200: PauseObject, ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      const holder = keyHolderOf(request);
      const owner: Owner = { developerId: holder.developerId, mode: holder.mode };
      const row = await longPoll({
        waitSeconds: request.query.wait ?? 0,
        read: async () => {
          const pause = await getOwnedPause(store, owner, request.params.id);
          if (!pause) throw notFound('Pause');
          return pause;
        },
        isDone: (row) => currentOutcome(row).status !== 'pending',
        // Every transition signals, the expirer's timeouts included.
        wake: (row, ms) => signals.wait(row.id, ms),
        isClosed: () => signals.isClosed,
      });
      const [presented] = await presentStoredPauses(services, [row]);
      return presented as PresentedPause;
    },
  );

  app.get(
    '/pause',
    {
      schema: {
        summary: 'List pauses, newest first',
        tags: ['pauses'],
        querystring: Type.Object(
          {
            status: Type.Optional(PauseStatusSchema),
            limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
            starting_after: Type.Optional(
              Type.String({ maxLength: 64, description: 'A pause id: the page after it.' }),
            ),
          },
          { additionalProperties: false },
        ),
        response: { 200: PauseList, ...errorResponses(400, 401) },
      },
    },
    async (request) => {
      const holder = keyHolderOf(request);
      const { rows, hasMore } = await listPauses(
        store,
        { developerId: holder.developerId, mode: holder.mode },
        {
          status: request.query.status,
          limit: request.query.limit ?? 20,
          startingAfter: request.query.starting_after,
          now: isoTime(clock.now()),
        },
      );
      return {
        object: 'list' as const,
        data: await presentStoredPauses(services, rows),
        has_more: hasMore,
      };
    },
  );
};
