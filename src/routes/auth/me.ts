import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { readAccount } from '../../actions/accounts.js';
import { principalOf } from '../../http/auth.js';
import { errorResponses, ModeSchema, Timestamp } from '../../http/schemas.js';
import { KeySummarySchema } from './schemas.js';

const Account = Type.Object({
  id: Type.String(),
  email: Type.String(),
  plan: Type.String(),
  mode: Type.Union([ModeSchema, Type.Null()], { description: 'Mode of the key presented; null for a session.' }),
  usage: Type.Object({
    period_start: Timestamp,
    period_end: Timestamp,
    live_pauses_used: Type.Integer(),
    live_pauses_quota: Type.Union([Type.Integer(), Type.Null()], { description: 'null: unlimited' }),
  }),
  keys: Type.Array(KeySummarySchema),
  created_at: Timestamp,
});

export const meRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/auth/me',
    {
      config: { auth: 'key_or_session' },
      schema: {
        summary: 'Read your account',
        description:
          'The authenticated account: its plan, this period’s usage, and its keys by their first characters.',
        tags: ['auth'],
        response: { 200: Account, ...errorResponses(401) },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const { developer, usage, keys } = await readAccount(app.services, principal.developerId);
      return { ...developer, mode: principal.mode, usage, keys };
    },
  );
};
