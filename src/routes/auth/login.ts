import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { Credentials, logIn } from '../../actions/accounts.js';
import { errorResponses, Timestamp } from '../../http/schemas.js';
import { DeveloperSchema, KeySummarySchema } from './schemas.js';

const LoggedIn = Type.Object({
  developer: DeveloperSchema,
  keys: Type.Array(KeySummarySchema),
  session: Type.Object(
    { token: Type.String({ description: 'svc_sess_ + 48 hex' }), expires_at: Timestamp },
    { description: 'Accepted as a Bearer token only by GET /v1/auth/me and POST /v1/auth/keys/rotate.' },
  ),
});

export const loginRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/auth/login',
    {
      config: { auth: 'none' },
      // Per client address, before the body is read: a refused client costs nothing more.
      onRequest: async (request) => app.rateLimits.auth.hit(`login:ip:${request.ip}`),
      schema: {
        summary: 'Log in',
        description:
          'Returns a one-hour session token, accepted as a Bearer token only by `GET /v1/auth/me` and `POST /v1/auth/keys/rotate`.',
        tags: ['auth'],
        // Public (one of the six endpoints without a key): overrides the document-wide bearer requirement.
        security: [],
        body: Credentials,
        response: { 200: LoggedIn, ...errorResponses(400, 401, 429) },
      },
    },
    async (request) => logIn(app.services, request.body, (key) => app.rateLimits.login.turn(key)),
  );
};
