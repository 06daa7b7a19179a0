import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { pauseTimeline, TIMELINE_TYPES, type TimelineEntry } from '../../actions/timeline.js';
import { keyHolderOf } from '../../http/auth.js';
import { errorResponses, Timestamp } from '../../http/schemas.js';
import { PauseIdParams } from './schemas.js';

const Entry = Type.Object({
  at: Timestamp,
  type: Type.Enum(TIMELINE_TYPES),
  actor: Type.Object({
    type: Type.Union([Type.Literal('developer'), Type.Literal('reviewer'), Type.Literal('system')]),
    email: Type.Optional(Type.String()),
  }),
  detail: Type.Object({}, { additionalProperties: true }),
});

const Timeline = Type.Object({
  object: Type.Literal('list'),
  data: Type.Array(Entry),
  has_more: Type.Boolean({ description: 'Always false: the whole timeline is returned.' }),
});

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Holds<T extends true> = T;
export type EntryMatchesAction = Holds<Same<Type.Static<typeof Entry>['type'], TimelineEntry['type']>>;

export const timelineRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/pause/:id/timeline',
    {
      schema: {
        summary: 'Read a pause’s timeline',
        description:
          'The audit record of a pause: who did what and when, from its creation to its outcome, oldest first.',
        tags: ['pauses'],
        params: PauseIdParams,
        response: { 200: Timeline, ...errorResponses(401, 404) },
      },
    },
    async (request) => {
      const holder = keyHolderOf(request);
      const data = await pauseTimeline(app.services, holder, request.params.id);
      return { object: 'list' as const, data, has_more: false };
    },
  );
};
