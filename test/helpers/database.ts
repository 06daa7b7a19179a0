import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';

// A fresh, empty database for one test file, on the engine this run is for
// (TEST_DB=sqlite|postgres, set by scripts/run-tests.mjs).

export const testEngine = (process.env.TEST_DB ?? 'sqlite') as 'sqlite' | 'postgres';

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

/** A fresh database on this run's engine (or the one named). */
export async function freshDatabase(engine = testEngine): Promise<TestDatabase> {
  if (engine === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'pausepoint-test-'));
    return {
      url: `sqlite:${join(dir, 'pausepoint.db')}`,
      drop: () => removeFolder(dir),
    };
  }
  const adminUrl = process.env.TEST_POSTGRES_URL;
  if (!adminUrl) throw new Error('TEST_DB=postgres needs TEST_POSTGRES_URL');
  const name = `pausepoint_test_${randomBytes(6).toString('hex')}`;
  await withAdmin(adminUrl, (client) => client.query(`create database ${name}`));
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      await withAdmin(adminUrl, (client) => client.query(`drop database if exists ${name} with (force)`));
    },
  };
}

/**
 * Removes a SQLite database's folder. A stopped service's checkpoint thread
 * closes its connection a moment later, and SQLite may create its -wal and
 * -shm files meanwhile: a file made after the folder was listed fails the
 * removal with ENOTEMPTY. So it starts over, listing again, until the writes
 * have stopped. (rmSync's own maxRetries only retries the last rmdir, without
 * listing again.)
 */
async function removeFolder(dir: string): Promise<void> {
  const attempts = 30;
  for (let attempt = 1; ; attempt++) {
    try {
      rmSync(dir, { recursive: true, force: true });
      return;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (attempt === attempts || (code !== 'ENOTEMPTY' && code !== 'EBUSY')) throw error;
      await sleep(100);
    }
  }
}

async function withAdmin<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}
