import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { readEvents } from '../../actions/events.js';
import { MAX_WAIT_SECONDS } from '../../actions/long-poll.js';
import { ApiError } from '../../errors.js';
import { keyHolderOf } from '../../http/auth.js';
import { abortedWhenGone } from '../../http/client-gone.js';
import { errorResponses, Timestamp } from '../../http/schemas.js';

// GET /v1/events: this developer's events in the key's mode, oldest first,
// long-polled. It backs `pausepoint listen`, which forwards events to a local
// receiver during development, so no public URL is needed.
//
// The cursor is a time, not an id: events from several instances may commit
// slightly out of id order, so a reader asks again from a little before the
// newest event it saw and skips the ids it already has.

const EventObject = Type.Object({
  id: Type.String(),
  object: Type.Literal('event'),
  type: Type.String(),
  pause_id: Type.String(),
  created_at: Timestamp,
  payload: Type.Object({}, { additionalProperties: true, description: 'The exact JSON body delivered to webhooks.' }),
});

const EventList = Type.Object({
  object: Type.Literal('list'),
  data: Type.Array(EventObject),
  has_more: Type.Boolean(),
});

export const eventRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/events',
    {
      schema: {
        summary: 'List events',
        description:
          'The events of this account and mode, oldest first. With `?wait=N`, waits up to N seconds for the first one; ' +
          'the wait counts against MAX_WAITS_PER_KEY like a pause long-poll, and over it answers at once.',
        tags: ['events'],
        querystring: Type.Object(
          {
            since: Type.Optional(Timestamp),
            limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 100 })),
            wait: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_WAIT_SECONDS })),
          },
          { additionalProperties: false },
        ),
        response: { 200: EventList, ...errorResponses(400, 401) },
      },
    },
    async (request, reply) => {
      const holder = keyHolderOf(request);
      const limit = request.query.limit ?? 100;
      const since = request.query.since === undefined ? undefined : new Date(request.query.since);
      // The date-time format admits times Date cannot hold, such as a leap second.
      if (since && Number.isNaN(since.getTime())) {
        throw new ApiError('invalid_request', 'Invalid request: since is not a time this service can use.', {
          fields: [{ field: 'since', problem: 'is not a valid time' }],
        });
      }
      const waitSeconds = request.query.wait ?? 0;
      const { rows, hasMore } = await readEvents(app.services, holder, {
        since: since?.toISOString(),
        limit,
        waitSeconds,
        signal: abortedWhenGone(reply.raw, waitSeconds),
      });
      return {
        object: 'list' as const,
        has_more: hasMore,
        data: rows.map((row) => ({
          id: row.id,
          object: 'event' as const,
          type: row.type,
          pause_id: row.pauseId,
          created_at: row.createdAt,
          payload: row.payload,
        })),
      };
    },
  );
};
