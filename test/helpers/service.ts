import { randomBytes } from 'node:crypto';
import { loadConfig } from '../../src/config.js';
import type { Clock } from '../../src/domain/clock.js';
import { createLogger } from '../../src/logger.js';
import { type RunningService, startService } from '../../src/service.js';
import { freshDatabase, type TestDatabase } from './database.js';

// A real pausepoint on a real port over a fresh database, with its log lines
// captured so tests can check what it logged (and that no secret was).

export interface TestService extends RunningService {
  url: string;
  databaseUrl: string;
  logs: string[];
  secretKey: string;
  /** Stops the service and drops its database. */
  destroy(): Promise<void>;
}

export interface StartOptions {
  env?: Record<string, string>;
  clock?: Clock;
  /** Reuse a database (e.g. to restart over the same data). */
  database?: TestDatabase;
  /** A CA the service's outbound client trusts (the test HTTPS receiver's). */
  outboundCa?: string;
}

export async function startTestService(options: StartOptions = {}): Promise<TestService> {
  const database = options.database ?? (await freshDatabase());
  const secretKey = options.env?.SECRET_KEY ?? randomBytes(32).toString('hex');
  const logs: string[] = [];
  let service: RunningService;
  try {
    const config = loadConfig({
      DATABASE_URL: database.url,
      PORT: '0',
      HOST: '127.0.0.1',
      SECRET_KEY: secretKey,
      LOG_LEVEL: 'info',
      AUTH_RATE_LIMIT: '1000/60',
      API_RATE_LIMIT: '100000/60',
      RESPOND_RATE_LIMIT: '100000/60',
      SEARCH_RATE_LIMIT: '100000000/60',
      ...options.env,
    });
    const logger = createLogger(config.logLevel, { write: (line: string) => void logs.push(line) });
    service = await startService(config, logger, { clock: options.clock, outboundCa: options.outboundCa });
  } catch (error) {
    if (!options.database) await database.drop(); // a database of its own is not left behind
    throw error;
  }
  if (!service.url) throw new Error('test service has no URL');
  return {
    ...service,
    url: service.url,
    databaseUrl: database.url,
    logs,
    secretKey,
    destroy: async () => {
      await service.stop();
      if (!options.database) await database.drop();
    },
  };
}

/** Two instances on one fresh database, with the same secret, as behind a load balancer. */
export interface TwoInstances {
  database: TestDatabase;
  first: TestService;
  second: TestService;
  destroy(): Promise<void>;
}

export async function startTwoInstances(): Promise<TwoInstances> {
  const database = await freshDatabase();
  // The same secret on both, as in a real deployment: a link or session made by one holds on the other.
  const env = { SECRET_KEY: randomBytes(32).toString('hex') };
  const first = await startTestService({ database, env });
  const second = await startTestService({ database, env });
  return {
    database,
    first,
    second,
    destroy: async () => {
      await first.destroy();
      await second.destroy();
      await database.drop();
    },
  };
}
