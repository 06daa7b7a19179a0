import { execFileSync } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Store } from '../../src/store/store.js';
import { freshDatabase, type TestDatabase } from '../helpers/database.js';
import { staleSource } from '../helpers/main-command.js';
import { newSecretKey, openTestStore, type ServiceProcess, spawnService } from '../helpers/process.js';
import type { Random } from './random.js';

// The service under test: one or more instances over one fresh database,
// sharing a master secret, each of which can be killed with SIGKILL and
// started again in its place. They run the build (dist/), which starts in
// half the time tsx needs; it is rebuilt first when src/ is newer.

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

export interface Cluster {
  /** The test's own connection to the database, for the raw rows. */
  store: Store;
  /** The instances running now (a killed one is gone until restarted). */
  running(): ServiceProcess[];
  /** A running instance to send a request to; waits while none runs. */
  any(random: Random): Promise<ServiceProcess>;
  /** SIGKILLs one running instance, chosen at random; returns its name. */
  killOne(random: Random): Promise<string>;
  /** Starts an instance again under a name that was killed. */
  restart(name: string): Promise<void>;
  /** Every log line at error level or above, of every instance ever started. */
  errorsLogged(): Array<Record<string, any>>;
  close(): Promise<void>;
}

export interface ClusterOptions {
  instances: number;
  env: Record<string, string>;
  caFile: string;
}

export async function startCluster(options: ClusterOptions): Promise<Cluster> {
  const database: TestDatabase = await freshDatabase();
  const secretKey = newSecretKey();
  const running = new Map<string, ServiceProcess>();
  const everStarted: ServiceProcess[] = [];
  const waiting = new Set<() => void>();

  const start = async (name: string) => {
    const service = await spawnService({
      databaseUrl: database.url,
      secretKey,
      caFile: options.caFile,
      env: options.env,
      name,
      entry: 'build',
      // Two instances, the clients and the database share two cores: starting can be slow.
      startupTimeoutMs: 60_000,
    });
    everStarted.push(service);
    running.set(name, service);
    for (const wake of waiting) wake();
    waiting.clear();
  };

  const names = Array.from({ length: options.instances }, (_, i) => String.fromCharCode(65 + i));
  // One at a time, so that the migrations are run by the first.
  for (const name of names) await start(name);
  const store = openTestStore(database.url, secretKey);

  return {
    store,
    running: () => [...running.values()],
    async any(random) {
      while (running.size === 0) await new Promise<void>((wake) => waiting.add(wake));
      return random.pick([...running.values()]);
    },
    async killOne(random) {
      const name = random.pick([...running.keys()]);
      const service = running.get(name)!;
      running.delete(name);
      const exit = await service.kill('SIGKILL');
      if (exit.signal !== 'SIGKILL') throw new Error(`${name} ended with ${JSON.stringify(exit)} before the kill`);
      return name;
    },
    restart: start,
    errorsLogged: () => everStarted.flatMap((service) => service.logs().filter((record) => record.level >= 50)),
    async close() {
      await Promise.all([...running.values()].map((service) => service.kill('SIGKILL')));
      running.clear();
      await store.close();
      await database.drop();
    },
  };
}

/** Builds dist/ when it is missing or older than any file in src/, so the test never runs stale code. */
export function buildIfStale(): void {
  const newer = staleSource();
  if (newer === undefined) return;
  console.log(`chaos: dist/ is older than ${newer}; npm run build`);
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });
}
