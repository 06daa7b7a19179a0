import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { consoleApp } from './console/index.js';
import type { ServiceContext } from './context.js';
import { randomBytesPooled } from './domain/crypto.js';
import { installAuthentication } from './http/auth.js';
import { installBodyParsers } from './http/body-parser.js';
import { clientErrorHandler, frameworkErrors, installErrorHandling } from './http/errors.js';
import { commonHeaders } from './http/headers.js';
import { installInputSafety } from './http/input-safety.js';
import { LoginBackoff } from './http/login-backoff.js';
import { RateLimiter } from './http/rate-limit.js';
import { installValidation } from './http/validation.js';
import { inboxApp } from './inbox/index.js';
import { type Logger, OneLinePerRequest, RequestLogger } from './logger.js';
import { loginRoute } from './routes/auth/login.js';
import { meRoute } from './routes/auth/me.js';
import { registerRoute } from './routes/auth/register.js';
import { rotateRoute } from './routes/auth/rotate.js';
import { billingHistoryRoute } from './routes/billing/history.js';
import { billingWebhookRoute } from './routes/billing/webhook.js';
import { eventRoutes } from './routes/events/events.js';
import { healthRoute } from './routes/health.js';
import { mcpRoutes } from './routes/mcp/mcp.js';
import { installMetrics } from './routes/metrics.js';
import { cancelPauseRoute } from './routes/pauses/cancel.js';
import { createPauseRoute } from './routes/pauses/create.js';
import { notificationRoutes } from './routes/pauses/notifications.js';
import { readPauseRoutes } from './routes/pauses/read.js';
import { timelineRoute } from './routes/pauses/timeline.js';
import { respondRoutes } from './routes/respond/respond.js';
import { slackInteractionsRoute } from './routes/slack/interactions.js';
import { deliveryRoutes } from './routes/webhooks/deliveries.js';
import { webhookRoutes } from './routes/webhooks/webhooks.js';
import { installApiReference } from './web/api-reference.js';
import { responsePage } from './web/routes.js';

declare module 'fastify' {
  interface FastifyInstance {
    services: ServiceContext;
    rateLimits: {
      auth: RateLimiter;
      login: LoginBackoff;
      api: RateLimiter;
      respond: RateLimiter;
      search: RateLimiter;
    };
  }
}

export const BODY_LIMIT_BYTES = 1024 * 1024;

export async function buildApp(services: ServiceContext): Promise<FastifyInstance> {
  const { config } = services;
  const newRequestId = () => `req_${randomBytesPooled(12).toString('hex')}`;
  const app = Fastify({
    loggerInstance: services.logger as FastifyBaseLogger,
    // A route-level log level would need the real child at once.
    childLoggerFactory: (logger, bindings, options) =>
      options.level ? logger.child(bindings, options) : new RequestLogger(logger as Logger, bindings),
    logController: new OneLinePerRequest(),
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
    search: new RateLimiter(
      config.searchRateLimit,
      now,
      `Too many searches: at most ${config.searchRateLimit.max} every ${config.searchRateLimit.windowMs / 1000} s per console session`,
    ),
  });
  installValidation(app);
  installErrorHandling(app);
  installBodyParsers(app);
  installInputSafety(app);
  // A callback, not an async hook: it runs on every request.
  app.addHook('onSend', (request, reply, payload, done) => {
    // Routes that may be cached (page assets) set their own cache-control.
    for (const [name, value] of Object.entries(commonHeaders(services, request.id))) {
      if (name !== 'cache-control' || !reply.hasHeader(name)) reply.header(name, value);
    }
    // While shutting down, every answer ends its connection: a kept-alive
    // socket (e.g. of a long-poll answered at shutdown) would hold close() open.
    if (services.waiters.isClosed) reply.header('connection', 'close');
    done(null, payload);
  });

  await installApiReference(app);

  installMetrics(app);
  await app.register(healthRoute);
  await app.register(slackInteractionsRoute);
  await app.register(responsePage);
  await app.register(consoleApp, { prefix: '/console' });
  await app.register(inboxApp, { prefix: '/inbox' });
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
      await v1.register(timelineRoute);
      await v1.register(respondRoutes);
      await v1.register(webhookRoutes);
      await v1.register(deliveryRoutes);
      await v1.register(billingHistoryRoute);
      await v1.register(billingWebhookRoute);
      await v1.register(eventRoutes);
    },
    { prefix: '/v1' },
  );
  // MCP for AI agents, with the same keys as /v1 (a scope of its own, outside the prefix).
  await app.register(async (mcp) => {
    installAuthentication(mcp);
    await mcp.register(mcpRoutes);
  });
  return app;
}
