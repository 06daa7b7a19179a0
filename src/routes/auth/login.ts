import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { isoTime } from '../../domain/clock.js';
import { DUMMY_PASSWORD_HASH, verifyPassword } from '../../domain/passwords.js';
import { ApiError } from '../../errors.js';
import { errorResponses, Timestamp } from '../../http/schemas.js';
import { createSession, findDeveloperByEmail, listKeys } from '../../store/accounts.js';
import { Credentials, DeveloperSchema, KeySummarySchema, normaliseEmail } from './schemas.js';

export const SESSION_TTL_MS = 60 * 60 * 1000;

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
        summary: 'Log in; returns a one-hour session for reading the account and rotating keys',
        tags: ['auth'],
        // Public (one of the six endpoints without a key): overrides the document-wide bearer requirement.
        security: [],
        body: Credentials,
        response: { 200: LoggedIn, ...errorResponses(400, 401, 429) },
      },
    },
    async (request) => {
      const email = normaliseEmail(request.body.email);
      // Per account, from any address: a back-off, not a wall (README "Accounts and keys").
      const account = `login:email:${email}`;
      await app.rateLimits.login.turn(account);
      const { store, clock } = app.services;
      const found = await findDeveloperByEmail(store, email);
      // Check a password either way, so an unknown email costs the same time.
      const valid = await verifyPassword(request.body.password, found?.password_hash ?? DUMMY_PASSWORD_HASH);
      if (!found || !valid) throw new ApiError('unauthorized', 'The email or password is wrong.');

      const now = clock.now();
      const session = await createSession(store, {
        developerId: found.id,
        now: isoTime(now),
        expiresAt: isoTime(new Date(now.getTime() + SESSION_TTL_MS)),
      });
      const developer = { id: found.id, email: found.email, plan: found.plan, created_at: found.created_at };
      return { developer, keys: await listKeys(store, found.id), session };
    },
  );
};
