import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Config } from './config.js';
import type { Clock } from './domain/clock.js';
import { randomBytesPooled } from './domain/crypto.js';
import { installAuthentication } from './http/auth.js';
import { installBodyParsers } from './http/body-parser.js';
import { clientErrorHandler, frameworkErrors, installErrorHandling } from './http/errors.js';
import { installInputSafety } from './http/input-safety.js';
import { LoginBackoff } from './http/login-backoff.js';
import { RateLimiter } from './http/rate-limit.js';
import { installValidation } from './http/validation.js';
import { type Logger, RequestLogger } from './logger.js';
import type { Metrics } from './metrics.js';
import type { SafeClient } from './net/safe-client.js';
import type { Mailer } from './notify/mailer.js';
import { loginRoute } from './routes/auth/login.js';
import { meRoute } from './routes/auth/me.js';
import { registerRoute } from './routes/auth/register.js';
import { rotateRoute } from './routes/auth/rotate.js';
import { billingHistoryRoute } from './routes/billing/history.js';
import { billingWebhookRoute } from './routes/billing/webhook.js';
import { eventRoutes } from './routes/events/events.js';
import { healthRoute } from './routes/health.js';
import { installMetrics } from './routes/metrics.js';
import { cancelPauseRoute } from './routes/pauses/cancel.js';
import { createPauseRoute } from './routes/pauses/create.js';
import { notificationRoutes } from './routes/pauses/notifications.js';
import { readPauseRoutes } from './routes/pauses/read.js';
import { respondRoutes } from './routes/respond/respond.js';
import { deliveryRoutes } from './routes/webhooks/deliveries.js';
import { webhookRoutes } from './routes/webhooks/webhooks.js';
import type { ServiceKeys } from './secrets.js';
import type { PauseSignals } from './signals.js';
import type { Store } from './store/store.js';
import { responsePage } from './web/routes.js';

/** What the HTTP layer needs from the rest of the process. */
export interface Services {
  config: Config;
  store: Store;
  clock: Clock;
  keys: ServiceKeys;
  logger: Logger;
  signals: PauseSignals;
  /** Email through SMTP; undefined when SMTP_URL and EMAIL_FROM are not set. */
  mailer: Mailer | undefined;
  /** The one SSRF-safe client for every outbound request. */
  outbound: SafeClient;
  metrics: Metrics;
  /** PUBLIC_BASE_URL, or the address the API listens on once it does. */
  publicBaseUrl: string;
}

declare module 'fastify' {
  interface FastifyInstance {
    services: Services;
    rateLimits: { auth: RateLimiter; login: LoginBackoff; api: RateLimiter; respond: RateLimiter };
  }
}

export const BODY_LIMIT_BYTES = 1024 * 1024;

export async function buildApp(services: Services): Promise<FastifyInstance> {
  const { config } = services;
  const newRequestId = () => `req_${randomBytesPooled(12).toString('hex')}`;
  const app = Fastify({
    loggerInstance: services.logger as FastifyBaseLogger,
    // A route-level log level would need the real child at once.
    childLoggerFactory: (logger, bindings, options) =>
      options.level ? logger.child(bindings, options) : new RequestLogger(logger as Logger, bindings),
    genReqId: newRequestId,
    requestIdHeader: false,
    bodyLimit: BODY_LIMIT_BYTES,
    // A client trickling its headers or body (slow-loris) is cut off rather
    // than holding a connection; Node checks every second. A request already
    // received (a long-poll waiting for its answer) is not affected.
    http: {
      headersTimeout: Math.min(config.headersTimeoutMs, config.requestTimeoutMs),
      connectionsCheckingInterval: 1000,
    },
    requestTimeout: config.requestTimeoutMs,
    // Response tokens are ~76 characters; a link padded by a mail client must
    // still reach the route (and its 404), not Fastify's bare 414.
    routerOptions: { maxParamLength: 512 },
    trustProxy: config.trustProxy,
    return503OnClosing: true,
    frameworkErrors,
    clientErrorHandler: clientErrorHandler(newRequestId),
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.decorate('services', services);
  const now = () => services.clock.now().getTime();
  app.decorate('rateLimits', {
    auth: new RateLimiter(config.authRateLimit, now),
    login: new LoginBackoff(config.authRateLimit, now),
    api: new RateLimiter(config.apiRateLimit, now),
    respond: new RateLimiter(config.respondRateLimit, now),
  });
  installValidation(app);
  installErrorHandling(app);
  installBodyParsers(app);
  installInputSafety(app);
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
    reply.header('x-content-type-options', 'nosniff');
    // API answers carry keys and private data: no cache may keep them. Routes
    // that may be cached (page assets) say so themselves.
    if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
    // While shutting down, every answer ends its connection: a kept-alive
    // socket (e.g. of a long-poll answered at shutdown) would hold close() open.
    if (services.signals.isClosed) reply.header('connection', 'close');
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'pausepoint API',
        version: '1',
        description:
          'Pause a program until a human answers. Every /v1 endpoint but six needs Authorization: Bearer <API key>.',
      },
      components: { securitySchemes: { apiKey: { type: 'http', scheme: 'bearer' } } },
      security: [{ apiKey: [] }],
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  installMetrics(app);
  await app.register(healthRoute);
  await app.register(responsePage);
  await app.register(
    async (v1) => {
      installAuthentication(v1);
      await v1.register(registerRoute);
      await v1.register(loginRoute);
      await v1.register(meRoute);
      await v1.register(rotateRoute);
      await v1.register(createPauseRoute);
      await v1.register(readPauseRoutes);
      await v1.register(cancelPauseRoute);
      await v1.register(notificationRoutes);
      await v1.register(respondRoutes);
      await v1.register(webhookRoutes);
      await v1.register(deliveryRoutes);
      await v1.register(billingHistoryRoute);
      await v1.register(billingWebhookRoute);
      await v1.register(eventRoutes);
    },
    { prefix: '/v1' },
  );
  return app;
}
