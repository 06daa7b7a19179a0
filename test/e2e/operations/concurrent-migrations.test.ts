import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { sql } from 'kysely';
import { afterEach, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.js';
import { openStore } from '../../../src/store/store.js';
import { freshDatabase, type TestDatabase } from '../../helpers/database.js';
import { mainCommand } from '../../helpers/main-command.js';
import { newSecretKey } from '../../helpers/process.js';

// Several processes migrating one fresh database at the same moment (e.g. an
// api and a worker process on first install) must all succeed, and apply each
// migration exactly once.

const root = resolve(import.meta.dirname, '../../..');
let database: TestDatabase | undefined;
afterEach(async () => {
  await database?.drop();
  database = undefined;
});

function migrate(databaseUrl: string, secretKey: string): Promise<{ code: number | null; output: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [...mainCommand(), 'migrate'], {
      cwd: root,
      env: { ...process.env, DATABASE_URL: databaseUrl, SECRET_KEY: secretKey, LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      done({ code, output });
    });
  });
}

it('lets three processes migrate a fresh database at once', async () => {
  for (let round = 0; round < 3; round++) {
    database = await freshDatabase();
    const secretKey = newSecretKey();
    const results = await Promise.all([1, 2, 3].map(() => migrate(database!.url, secretKey)));
    for (const result of results) expect(result.code, result.output).toBe(0);
    const store = openStore(loadConfig({ DATABASE_URL: database.url, SECRET_KEY: secretKey }).database);
    try {
      const { rows } = await sql<{ name: string }>`select name from kysely_migration`.execute(store.db);
      const names = rows.map((row) => row.name);
      expect(names).toContain('0001_accounts');
      expect(names.length).toBeGreaterThan(0);
      expect(new Set(names).size).toBe(names.length);
    } finally {
      await store.close();
    }
    await database.drop();
    database = undefined;
  }
}, 90_000);
