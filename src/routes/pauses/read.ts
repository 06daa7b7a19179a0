import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { MAX_WAIT_SECONDS } from '../../actions/long-poll.js';
import { listOwnedPauses, readOwnedPause } from '../../actions/read-pauses.js';
import { MAX_ID_LENGTH } from '../../domain/ids.js';
import { keyHolderOf } from '../../http/auth.js';
import { abortedWhenGone } from '../../http/client-gone.js';
import { errorResponses } from '../../http/schemas.js';
import type { Owner } from '../../store/pauses.js';
import { PauseIdParams, PauseObject, PauseStatusSchema } from './schemas.js';

const PauseList = Type.Object({
  object: Type.Literal('list'),
  data: Type.Array(PauseObject),
  has_more: Type.Boolean(),
});

export const readPauseRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const services = app.services;

  app.get(
    '/pause/:id',
    {
      schema: {
        summary: 'Read a pause',
        description:
          'With `?wait=N` the answer comes as soon as the pause leaves `pending`, or after N seconds with the pause ' +
          'still pending; a wait may end early (the service shutting down), so poll again while it is pending. ' +
          'One API key holds at most MAX_WAITS_PER_KEY (default 100) waits at once per instance, counting ' +
          "the MCP tools' waits: a wait over that answers at once with the pause as it stands.",
        tags: ['pauses'],
        params: PauseIdParams,
        querystring: Type.Object(
          { wait: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_WAIT_SECONDS })) },
          { additionalProperties: false },
        ),
        response: { 200: PauseObject, ...errorResponses(400, 401, 404) },
      },
    },
    async (request, reply) => {
      const holder = keyHolderOf(request);
      const owner: Owner = { developerId: holder.developerId, mode: holder.mode };
      const waitSeconds = request.query.wait ?? 0;
      return readOwnedPause(services, owner, request.params.id, {
        waitSeconds,
        signal: abortedWhenGone(reply.raw, waitSeconds),
        waiter: holder.credentialHash,
      });
    },
  );

  app.get(
    '/pause',
    {
      schema: {
        summary: 'List pauses',
        description: 'The pauses of this key’s mode, newest first, a page at a time, optionally of one status.',
        tags: ['pauses'],
        querystring: Type.Object(
          {
            status: Type.Optional(PauseStatusSchema),
            limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
            starting_after: Type.Optional(
              Type.String({ maxLength: MAX_ID_LENGTH, description: 'A pause id: the page after it.' }),
            ),
          },
          { additionalProperties: false },
        ),
        response: { 200: PauseList, ...errorResponses(400, 401) },
      },
    },
    async (request) => {
      const holder = keyHolderOf(request);
      const { data, hasMore } = await listOwnedPauses(
        services,
        { developerId: holder.developerId, mode: holder.mode },
        { status: request.query.status, limit: request.query.limit ?? 20, startingAfter: request.query.starting_after },
      );
      return { object: 'list' as const, data, has_more: hasMore };
    },
  );
};
