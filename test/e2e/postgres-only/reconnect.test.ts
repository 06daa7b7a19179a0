import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { call, registerAccount } from '../../helpers/http.js';
import { startTestService, type TestService } from '../../helpers/service.js';

// Only the PostgreSQL run includes this folder (scripts/run-tests.mjs): SQLite
// has no server connections to lose.

let service: TestService;
let key: string;
beforeAll(async () => {
  service = await startTestService();
  key = (await registerAccount(service.url)).live;
});
afterAll(() => service?.destroy());

it('recovers once PostgreSQL drops the connections', async () => {
  const client = new pg.Client({ connectionString: process.env.TEST_POSTGRES_URL });
  await client.connect();
  try {
    await client.query(
      'select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
      [new URL(service.databaseUrl).pathname.slice(1)],
    );
  } finally {
    await client.end();
  }
  // The pool replaces the dead connections: at most one request may see the break.
  let health = await call(service.url, 'GET', '/health');
  if (health.status !== 200) health = await call(service.url, 'GET', '/health');
  expect(health.body).toEqual({ status: 'ok', database: 'ok' });
  expect((await call(service.url, 'GET', '/v1/auth/me', { token: key })).status).toBe(200);
});
