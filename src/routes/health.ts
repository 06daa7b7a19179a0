import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';

const CHECK_TIMEOUT_MS = 2000;

const Health = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('unavailable')]),
  database: Type.Union([Type.Literal('ok'), Type.Literal('unreachable'), Type.Literal('writes_failing')]),
  reason: Type.Optional(Type.String()),
});

export const healthRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/health',
    {
      schema: {
        summary: 'Check health',
        description:
          'Liveness and database health; 503 when the database does not answer or refuses writes (e.g. a full disk). Needs no key.',
        tags: ['operations'],
        security: [],
        response: { 200: Health, 503: Health },
      },
    },
    async (_request, reply) => {
      const { store } = app.services;
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('database check timed out')), CHECK_TIMEOUT_MS);
      });
      try {
        // Reading says the database answers; whether it takes writes is what
        // the service's own writes found (health checks do not write).
        const failure = await Promise.race([store.ping().then(() => store.writeFailure()), timeout]);
        if (failure) {
          const reason = `database writes are failing: ${failure}`;
          app.log.warn({ reason }, 'health check: database writes are failing');
          return reply.code(503).send({ status: 'unavailable', database: 'writes_failing', reason });
        }
        return { status: 'ok' as const, database: 'ok' as const };
      } catch (error) {
        app.log.warn({ err: error }, 'health check: database unreachable');
        return reply.code(503).send({ status: 'unavailable', database: 'unreachable' });
      } finally {
        clearTimeout(timer);
      }
    },
  );
};
