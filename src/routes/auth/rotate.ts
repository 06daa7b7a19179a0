import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { rotateDeveloperKey } from '../../actions/keys.js';
import { ApiError } from '../../errors.js';
import { principalOf } from '../../http/auth.js';
import { errorResponses, ModeSchema, Timestamp } from '../../http/schemas.js';

const Rotated = Type.Object({
  key: Type.String({ description: 'The new key. Shown only this once; the old one no longer works.' }),
  mode: ModeSchema,
  prefix: Type.String(),
  created_at: Timestamp,
});

export const rotateRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/auth/keys/rotate',
    {
      config: { auth: 'key_or_session' },
      schema: {
        summary: 'Rotate an API key',
        description:
          'Replaces the key presented (or, with a login session, the key of `?mode=`): the old key is refused at once, and the new one is shown in this answer only.',
        tags: ['auth'],
        querystring: Type.Object({ mode: Type.Optional(ModeSchema) }, { additionalProperties: false }),
        response: { 200: Rotated, ...errorResponses(400, 401) },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const requested = request.query.mode;
      if (principal.via === 'session' && !requested) {
        throw new ApiError(
          'invalid_request',
          'With a login session, say which key to rotate: ?mode=live or ?mode=test.',
        );
      }
      if (principal.via === 'api_key' && requested && requested !== principal.mode) {
        throw new ApiError('invalid_request', `An API key rotates itself; this is a ${principal.mode} key.`);
      }
      const rotated = await rotateDeveloperKey(app.services, {
        developerId: principal.developerId,
        mode: principal.mode ?? (requested as 'live' | 'test'),
        // A key is replaced only if it is still the active one: of two racing
        // rotations with the same key, one wins and the other gets a 401.
        currentHash: principal.via === 'api_key' ? principal.credentialHash : undefined,
      });
      if (!rotated) throw new ApiError('unauthorized', 'The API key is invalid or has been rotated.');
      return rotated;
    },
  );
};
