#!/usr/bin/env node
// The pausepoint process: `serve` (the default) or `migrate`; any other command is a client command (src/cli/).
import type { Config } from './config.js';

async function main(command: string): Promise<void> {
  // Loaded here rather than at the top, so that the client commands start
  // without loading the service's modules (seconds under tsx).
  const [{ ConfigError, loadConfig }, { createLogger }, { startService }, { migrateToLatest, openStore }] =
    await Promise.all([
      import('./config.js'),
      import('./logger.js'),
      import('./service.js'),
      import('./store/store.js'),
    ]);
  let config: Config;
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

const command = process.argv[2] ?? 'serve';
if (command === 'serve' || command === 'migrate') {
  main(command).catch((error) => {
    console.error('pausepoint: failed to start:', error instanceof Error ? error.message : error);
    process.exit(1);
  });
} else {
  // The client commands (ask, pauses, webhooks, listen, help) live in src/cli/.
  import('./cli/index.js')
    .then(({ runCli }) => runCli(process.argv.slice(2)))
    .then(
      (code) => {
        process.exitCode = code;
        // Exit once output is flushed, even if an idle connection lingers.
        setTimeout(() => process.exit(code), 500).unref();
      },
      (error) => {
        console.error('pausepoint:', error instanceof Error ? error.message : error);
        process.exit(3);
      },
    );
}
