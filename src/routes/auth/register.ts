import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { isoTime } from '../../domain/clock.js';
import { hashPassword } from '../../domain/passwords.js';
import { ApiError } from '../../errors.js';
import { errorResponses } from '../../http/schemas.js';
import { createDeveloper, findDeveloperByEmail } from '../../store/accounts.js';
import { isUniqueViolation } from '../../store/errors.js';
import { Credentials, DeveloperSchema, normaliseEmail } from './schemas.js';

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

const emailTaken = () => new ApiError('email_taken', 'An account with this email already exists.');

export const registerRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/auth/register',
    {
      config: { auth: 'none' },
      // Per client address, before the body is read: a refused client costs nothing more.
      onRequest: async (request) => app.rateLimits.auth.hit(`register:ip:${request.ip}`),
      schema: {
        summary: 'Create an account with a live and a test API key',
        tags: ['auth'],
        // Public (one of the six endpoints without a key): overrides the document-wide bearer requirement.
        security: [],
        body: Credentials,
        response: { 201: Registered, ...errorResponses(400, 409, 429) },
      },
    },
    async (request, reply) => {
      const email = normaliseEmail(request.body.email);
      app.rateLimits.auth.hit(`register:email:${email}`);
      const { store, clock } = app.services;
      // A friendly early answer; the unique index settles a race.
      if (await findDeveloperByEmail(store, email)) throw emailTaken();
      const passwordHash = await hashPassword(request.body.password);
      try {
        const { developer, keys } = await createDeveloper(store, {
          email,
          passwordHash,
          plan: 'free',
          now: isoTime(clock.now()),
        });
        return reply.code(201).send({ developer, keys: { live: keys.live.plaintext, test: keys.test.plaintext } });
      } catch (error) {
        if (isUniqueViolation(error)) throw emailTaken();
        throw error;
      }
    },
  );
};
