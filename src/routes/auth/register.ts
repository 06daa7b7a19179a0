import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { Credentials, registerDeveloper } from '../../actions/accounts.js';
import { errorResponses } from '../../http/schemas.js';
import { DeveloperSchema } from './schemas.js';

const Registered = Type.Object({
  developer: DeveloperSchema,
  keys: Type.Object(
    {
      live: Type.String({ description: 'svc_live_ + 48 hex. Shown only this once.' }),
      test: Type.String({ description: 'svc_test_ + 48 hex. Shown only this once.' }),
    },
    { description: 'Store both now: only their SHA-256 is kept.' },
  ),
});

export const registerRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/auth/register',
    {
      config: { auth: 'none' },
      // Per client address, before the body is read: a refused client costs nothing more.
      onRequest: async (request) => app.rateLimits.auth.hit(`register:ip:${request.ip}`),
      schema: {
        summary: 'Create an account',
        description:
          'Creates an account with a live and a test API key, both shown in this answer only. Registering an email twice is `409 email_taken`.',
        tags: ['auth'],
        // Public (one of the six endpoints without a key): overrides the document-wide bearer requirement.
        security: [],
        body: Credentials,
        response: { 201: Registered, ...errorResponses(400, 409, 429) },
      },
    },
    async (request, reply) => {
      const { developer, keys } = await registerDeveloper(app.services, request.body, (key) =>
        app.rateLimits.auth.hit(key),
      );
      return reply.code(201).send({ developer, keys: { live: keys.live.plaintext, test: keys.test.plaintext } });
    },
  );
};
