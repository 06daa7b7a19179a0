import { createHmac } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, expect } from 'vitest';
import type { Store } from '../../src/store/store.js';
import { freshDatabase, type TestDatabase } from './database.js';
import { call } from './http.js';
import { type HttpsReceiver, type ReceivedRequest, startHttpsReceiver } from './https-receiver.js';
import {
  killAllServices,
  newSecretKey,
  openTestStore,
  type ServiceProcess,
  type SpawnOptions,
  spawnService,
} from './process.js';

// What the process tests (test/e2e/operations/) share: deployments of service
// processes over one database, an HTTPS receiver for their webhooks, and reads
// of the raw rows. processTests() registers a file's hooks: the receiver for
// the whole file, and after each test its processes killed, connections
// closed and databases dropped.

export const SECRET = 'whsec_processes_0123456789';

/** One database and master secret that service processes (and restarts) share. */
export interface Deployment {
  databaseUrl: string;
  secretKey: string;
  /** The test's own connection, for the raw rows (opened with the first process). */
  readonly store: Store;
  start(options?: Partial<SpawnOptions>): Promise<ServiceProcess>;
}

export interface ProcessTests {
  /** The file's HTTPS receiver (reset before each test). */
  readonly receiver: HttpsReceiver;
  /** A database and secret for processes to share; `env` is given to every process started on it. */
  deploy(env?: Record<string, string>): Promise<Deployment>;
  /** Runs after the test, before the databases are dropped. */
  cleanup(step: () => Promise<void>): void;
  addWebhook(service: ServiceProcess, key: string, events: string[]): Promise<{ id: string }>;
}

export function processTests(): ProcessTests {
  let receiver: HttpsReceiver | undefined;
  beforeAll(async () => {
    receiver = await startHttpsReceiver();
  });
  afterAll(async () => {
    await killAllServices();
    await receiver?.close();
  });
  beforeEach(() => {
    receiver?.reset();
    receiver?.setDefault({});
  });
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    // Processes first (they hold the database), then connections, then the database.
    await killAllServices();
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  const receiverOf = () => {
    if (!receiver) throw new Error('the receiver starts in beforeAll');
    return receiver;
  };

  async function deploy(env: Record<string, string> = {}): Promise<Deployment> {
    const database: TestDatabase = await freshDatabase();
    cleanups.push(() => database.drop());
    const secretKey = newSecretKey();
    let store: Store | undefined;
    return {
      databaseUrl: database.url,
      secretKey,
      get store() {
        if (!store) throw new Error('start a service first');
        return store;
      },
      async start(options = {}) {
        const service = await spawnService({
          databaseUrl: database.url,
          secretKey,
          caFile: receiverOf().caFile,
          ...options,
          env: { ...env, ...options.env },
        });
        if (!store) {
          const opened = openTestStore(database.url, secretKey);
          store = opened;
          cleanups.push(() => opened.close());
        }
        return service;
      },
    };
  }

  async function addWebhook(service: ServiceProcess, key: string, events: string[]) {
    const reply = await call(urlOf(service), 'POST', '/v1/webhooks', {
      token: key,
      body: { url: `${receiverOf().url}/hook`, events, secret: SECRET },
    });
    expect(reply.status, reply.text).toBe(201);
    return reply.body as { id: string };
  }

  return {
    get receiver() {
      return receiverOf();
    },
    deploy,
    cleanup: (step) => cleanups.push(step),
    addWebhook,
  };
}

export const urlOf = (service: ServiceProcess): string => {
  if (!service.url) throw new Error(`${service.name} does not listen`);
  return service.url;
};

export const rawStatuses = async (store: Store, ids: string[]) =>
  new Map(
    (await store.db.selectFrom('pauses').select(['id', 'status']).where('id', 'in', ids).execute()).map((row) => [
      row.id,
      row.status,
    ]),
  );

export const eventsOf = (store: Store, ids: string[]) =>
  store.db.selectFrom('events').select(['id', 'pause_id', 'type']).where('pause_id', 'in', ids).execute();

export const deliveriesOf = (store: Store, webhookId: string) =>
  store.db.selectFrom('deliveries').selectAll().where('webhook_id', '=', webhookId).execute();

/** How many times each pause id occurs. */
export const countBy = (ids: string[]) => {
  const counts = new Map<string, number>();
  for (const id of ids) counts.set(id, (counts.get(id) ?? 0) + 1);
  return counts;
};

export const payloadOf = (request: ReceivedRequest) =>
  JSON.parse(request.body.toString()) as { event: string; pause_id: string; data: Record<string, unknown> };
export const deliveryIdOf = (request: ReceivedRequest) => String(request.headers['x-service-delivery']);

/** The signature a receiver computes itself: HMAC-SHA256 of the raw bytes with the shared secret. */
export function expectSigned(request: ReceivedRequest): void {
  const expected = `sha256=${createHmac('sha256', SECRET).update(request.body).digest('hex')}`;
  expect(request.headers['x-service-signature']).toBe(expected);
}

/** Runs `work` for 0…count-1 with at most `parallel` at a time; results in order. */
export async function inParallel<T>(
  count: number,
  parallel: number,
  work: (index: number) => Promise<T>,
): Promise<T[]> {
  const results: T[] = new Array(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(parallel, count) }, async () => {
      while (next < count) {
        const index = next++;
        results[index] = await work(index);
      }
    }),
  );
  return results;
}

export const errorsLogged = (service: ServiceProcess) => service.logs().filter((record) => Number(record.level) >= 50);
