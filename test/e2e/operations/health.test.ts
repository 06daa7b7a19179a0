import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testEngine } from '../../helpers/database.js';
import { expectError, expectNoInternals } from '../../helpers/errors.js';
import { call, registerAccount } from '../../helpers/http.js';
import { startTestService, type TestService } from '../../helpers/service.js';

// GET /health, and what it and the API answer when the database goes away.
// The response page then: test/e2e/responses/page-on-failure.test.ts; a database that
// still reads but refuses writes: sqlite-only/full-disk.test.ts and postgres-only/read-only-database.test.ts.

const PASSWORD = 'platform password 1';

describe('GET /health', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService();
  });
  afterAll(() => service?.destroy());

  it('answers 200 {status: ok, database: ok} without a key, and ignores a bad one', async () => {
    for (const headers of [{}, { authorization: 'Bearer nonsense' }] as Record<string, string>[]) {
      const reply = await call(service.url, 'GET', '/health', { headers });
      expect(reply.status).toBe(200);
      expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
      expect(reply.body).toEqual({ status: 'ok', database: 'ok' });
    }
  });

  it('is not under /v1', async () => {
    expectError(await call(service.url, 'GET', '/v1/health'), 404, 'not_found');
  });
});

describe('when the database goes away', () => {
  let service: TestService;
  let account: { live: string };
  beforeAll(async () => {
    service = await startTestService();
    account = await registerAccount(service.url);
  });
  afterAll(() => service?.destroy());

  it('answers /health with 503 unavailable, and other requests with a bare 500', async () => {
    expect((await call(service.url, 'GET', '/health')).status).toBe(200);
    if (testEngine === 'postgres') {
      await withAdmin((client) => client.query(`drop database ${databaseName(service)} with (force)`));
    } else {
      await service.store.close();
    }

    const health = await call(service.url, 'GET', '/health');
    expect(health.status).toBe(503);
    expect(health.body).toEqual({ status: 'unavailable', database: 'unreachable' });
    expectNoInternals(health);
    expect(service.logs.some((line) => line.includes('health check: database unreachable'))).toBe(true);

    const me = await call(service.url, 'GET', '/v1/auth/me', { token: account.live });
    expectError(me, 500, 'internal_error');
    expectNoInternals(me);
    const login = await call(service.url, 'POST', '/v1/auth/login', {
      body: { email: 'someone@example.com', password: PASSWORD },
    });
    expectError(login, 500, 'internal_error');
    expectNoInternals(login);
    // The cause is in the log, under the request's id.
    const logged = service.logs
      .map((line) => JSON.parse(line))
      .find((e) => e.reqId === me.body.error.request_id && e.err);
    expect(logged).toMatchObject({ level: 50, msg: 'request failed' });

    // The process is still up and answers what needs no database.
    expect((await call(service.url, 'GET', '/openapi.json')).status).toBe(200);
  });
});

function databaseName(service: TestService): string {
  return new URL(service.databaseUrl).pathname.slice(1);
}

async function withAdmin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: process.env.TEST_POSTGRES_URL });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}
