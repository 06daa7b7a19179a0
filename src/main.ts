#!/usr/bin/env node
// The pausepoint process: `serve` (the default) or `migrate`.
import { ConfigError, loadConfig } from './config.js';
import { createLogger } from './logger.js';
import { startService } from './service.js';
import { migrateToLatest, openStore } from './store/store.js';

async function main(command: string): Promise<void> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`pausepoint: configuration error: ${error.message}`);
      process.exit(1);
    }
    throw error;
  }
  const logger = createLogger(config.logLevel);

  if (command === 'migrate') {
    const store = openStore(config.database);
    try {
      const applied = await migrateToLatest(store);
      logger.info({ migrations: applied }, applied.length ? 'database migrated' : 'database already up to date');
    } finally {
      await store.close();
    }
    return;
  }
  if (command !== 'serve') {
    console.error(`pausepoint: unknown command "${command}"; use serve or migrate`);
    process.exit(1);
  }

  const service = await startService(config, logger);
  logger.info({ url: service.url, role: config.role, database: config.database.kind }, 'pausepoint started');

  const shutdown = (signal: string) => {
    logger.info({ signal }, 'shutting down: finishing in-flight requests');
    const forced = setTimeout(() => {
      logger.error('shutdown took over 30 s; exiting');
      process.exit(1);
    }, 30_000);
    forced.unref();
    service.stop().then(
      () => {
        logger.info('stopped');
        process.exit(0);
      },
      (error) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}

main(process.argv[2] ?? 'serve').catch((error) => {
  console.error('pausepoint: failed to start:', error instanceof Error ? error.message : error);
  process.exit(1);
});
