import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

// A fresh, empty database for one test file, on the engine this run is for
// (TEST_DB=sqlite|postgres, set by scripts/run-tests.mjs).

export const testEngine = (process.env.TEST_DB ?? 'sqlite') as 'sqlite' | 'postgres';

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

export async function freshDatabase(): Promise<TestDatabase> {
  if (testEngine === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'pausepoint-test-'));
    return {
      url: `sqlite:${join(dir, 'pausepoint.db')}`,
      drop: async () => rmSync(dir, { recursive: true, force: true }),
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

async function withAdmin<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}
