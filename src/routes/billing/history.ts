import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { planOverview } from '../../actions/usage.js';
import { keyHolderOf } from '../../http/auth.js';
import { errorResponses, Timestamp } from '../../http/schemas.js';

const Billing = Type.Object({
  plan: Type.String(),
  status: Type.Union([Type.String(), Type.Null()], { description: "The provider's subscription status, if any." }),
  period: Type.Object({ start: Timestamp, end: Timestamp }),
  usage: Type.Object({
    live_pauses_used: Type.Integer(),
    live_pauses_quota: Type.Union([Type.Integer(), Type.Null()]),
  }),
  changes: Type.Array(
    Type.Object({
      from_plan: Type.String(),
      to_plan: Type.String(),
      status: Type.Union([Type.String(), Type.Null()]),
      event_id: Type.String({ description: "The provider's event id that caused it." }),
      event_type: Type.String(),
      at: Timestamp,
    }),
  ),
});

export const billingHistoryRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/billing',
    {
      schema: {
        summary: 'Read plan and usage',
        description: 'The plan, the live pauses used this period against its quota, and the latest plan changes.',
        tags: ['billing'],
        response: { 200: Billing, ...errorResponses(401) },
      },
    },
    async (request) => {
      const { plan, status, usage, changes } = await planOverview(app.services, keyHolderOf(request).developerId);
      return {
        plan,
        status,
        period: { start: usage.period_start, end: usage.period_end },
        usage: { live_pauses_used: usage.live_pauses_used, live_pauses_quota: usage.live_pauses_quota },
        changes: changes.map((change) => ({
          from_plan: change.from_plan,
          to_plan: change.to_plan,
          status: change.status,
          event_id: change.event_id,
          event_type: change.event_type,
          at: change.created_at,
        })),
      };
    },
  );
};
