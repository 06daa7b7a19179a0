import type { FastifyInstance } from 'fastify';

/**
 * Counts and times every request, and serves GET /metrics in Prometheus text
 * format. Installed on the root instance (not as an encapsulated plugin) so
 * the hook sees every route. /metrics is outside /v1 and needs no key, like
 * /health: expose it only to your monitoring network (docs/operations.md).
 */
export function installMetrics(app: FastifyInstance): void {
  const { metrics } = app.services;

  // A callback, not an async hook: it runs on every request.
  app.addHook('onResponse', (request, reply, done) => {
    const labels = {
      method: request.method,
      route: request.routeOptions.url ?? 'unmatched',
      status: String(reply.statusCode),
    };
    metrics.httpRequests.inc(labels);
    metrics.httpDuration.observe(labels, reply.elapsedTime / 1000);
    done();
  });

  app.get(
    '/metrics',
    {
      schema: {
        summary: 'Read Prometheus metrics',
        description:
          'The service’s metrics in the Prometheus text format. It needs no key, like `/health`: expose it only to ' +
          'your monitoring network (block `/metrics` at the load balancer, or scrape each instance directly).',
        tags: ['operations'],
        security: [],
        response: {
          200: {
            description: 'Prometheus text exposition format 0.0.4.',
            content: { 'text/plain': { schema: { type: 'string' } } },
          },
        },
      },
    },
    async (_request, reply) =>
      reply
        .type(metrics.registry.contentType)
        .header('cache-control', 'no-store')
        .send(await metrics.registry.metrics()),
  );
}
