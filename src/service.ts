import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import type { Config } from './config.js';
import type { ServiceContext } from './context.js';
import { type Clock, systemClock } from './domain/clock.js';
import { Slots } from './domain/slots.js';
import type { Logger } from './logger.js';
import { createMailer } from './messages/mailer.js';
import { createSlackApp } from './messages/slack-app.js';
import { Metrics } from './metrics.js';
import { createSafeClient } from './net/safe-client.js';
import { deriveServiceKeys, resolveMasterSecret } from './secrets.js';
import { PauseWaiters, WakeUpListener } from './signals.js';
import { migrateToLatest, openStore, type Store } from './store/store.js';
import { SlackSocket } from './worker/slack-socket.js';
import { Worker } from './worker/worker.js';

/** What every outbound request of the service says it is. */
export const USER_AGENT = 'pausepoint-webhooks/1';

// One running pausepoint: the database, the HTTP API and (by ROLE) the
// background worker. main.ts runs one per process; tests run several.

export interface RunningService {
  app: FastifyInstance;
  store: Store;
  /** Where the API listens; undefined for ROLE=worker. */
  url: string | undefined;
  /** The background work; undefined for ROLE=api. */
  worker: Worker | undefined;
  stop(): Promise<void>;
}

export async function startService(
  config: Config,
  logger: Logger,
  options: {
    clock?: Clock;
    /** An extra CA the outbound client trusts (tests; production uses NODE_EXTRA_CA_CERTS). */
    outboundCa?: string;
  } = {},
): Promise<RunningService> {
  // The secret first: a start that must stop over a damaged secret file leaves the database untouched.
  const keys = deriveServiceKeys(resolveMasterSecret(config, (message) => logger.warn(message)));
  const store = openStore(config.database, {
    afterCommitFailed: (error) => logger.error({ err: error }, 'a wake-up after a commit failed (the write committed)'),
  });
  try {
    const applied = await migrateToLatest(store);
    if (applied.length > 0) logger.info({ migrations: applied }, 'database migrated');
    if (config.webhookAllowedNetworks.length > 0) {
      logger.warn(
        { networks: config.webhookAllowedNetworks.map(([address, bits]) => `${address.toString()}/${bits}`) },
        'WEBHOOK_ALLOWED_NETWORKS exempts these networks from the public-address rule',
      );
    }
    const wakeUpListener = new WakeUpListener(store, logger);
    await wakeUpListener.start();
    const waiters = new PauseWaiters(store, logger);
    const clock = options.clock ?? systemClock;
    const outbound = createSafeClient({
      allowedNetworks: config.webhookAllowedNetworks,
      userAgent: USER_AGENT,
      timeoutMs: config.outboundTimeoutMs,
      ca: options.outboundCa,
    });
    const services: ServiceContext = {
      config,
      store,
      clock,
      metrics: new Metrics(store, clock),
      keys,
      logger,
      waiters,
      wakeUpListener,
      outbound,
      mailer: createMailer(config),
      slack: config.slack && createSlackApp(config.slack, outbound, config.outboundTimeoutMs, logger),
      searchSlots: new Slots(config.searchConcurrency),
      publicBaseUrl: config.publicBaseUrl ?? `http://${hostForUrl(config.host)}:${config.port}`,
    };
    const app = await buildApp(services);
    const worker = config.role === 'api' ? undefined : new Worker(services);
    let url: string | undefined;
    if (config.role !== 'worker') {
      await app.listen({ port: config.port, host: config.host });
      const address = app.server.address();
      url =
        typeof address === 'object' && address ? `http://${hostForUrl(address.address)}:${address.port}` : undefined;
      if (!config.publicBaseUrl && url) services.publicBaseUrl = url;
    } else {
      await app.ready();
    }

    worker?.start();
    // Socket Mode hears the buttons where the background work runs.
    const slackSocket =
      config.slack?.appToken && config.role !== 'api'
        ? new SlackSocket(services, config.slack.appToken, config.slack.apiUrl)
        : undefined;
    slackSocket?.start();

    let stopping: Promise<void> | undefined;
    const stop = () => {
      stopping ??= (async () => {
        waiters.close(); // ends long-polls with the pause as it stands
        await wakeUpListener.close();
        // Stop accepting and let in-flight requests finish; after a grace
        // period, cut what is left, e.g. a connection that never sent a request.
        const cutOff = setTimeout(() => app.server.closeAllConnections(), config.shutdownGraceMs);
        await app.close();
        clearTimeout(cutOff);
        await slackSocket?.stop();
        await worker?.stop();
        await services.outbound.close();
        services.mailer?.close();
        await store.close();
      })();
      return stopping;
    };
    return { app, store, url, worker, stop };
  } catch (error) {
    await store.close();
    throw error;
  }
}

function hostForUrl(address: string): string {
  if (address === '0.0.0.0' || address === '::') return '127.0.0.1';
  return address.includes(':') ? `[${address}]` : address;
}
