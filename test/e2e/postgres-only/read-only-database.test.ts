import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Account, call, registerAccount } from '../../helpers/http.js';
import { eventually } from '../../helpers/pauses.js';
import { startTestService, type TestService } from '../../helpers/service.js';

// When PostgreSQL refuses writes (a read-only database, as after a failover
// to a standby) while it still answers reads: failed requests are logged with
// the database's own error, and /health says writes are failing until a
// write succeeds again. The SQLite case is sqlite-only/full-disk.test.ts.

describe('a database that refuses writes (PostgreSQL)', () => {
  let service: TestService;
  let account: Account;
  beforeAll(async () => {
    service = await startTestService();
    account = await registerAccount(service.url);
  });
  afterAll(() => service?.destroy());

  /** Makes new sessions read-only (as after a failover to a standby), and ends the pool's current ones. */
  const setReadOnly = async (readOnly: boolean) => {
    const name = new URL(service.databaseUrl).pathname.slice(1);
    const admin = new pg.Client({ connectionString: process.env.TEST_POSTGRES_URL });
    await admin.connect();
    try {
      await admin.query(`alter database ${name} set default_transaction_read_only = ${readOnly ? 'on' : 'off'}`);
      await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1', [name]);
    } finally {
      await admin.end();
    }
  };

  it('logs the refusal, answers /health 503 with the reason, and recovers after a write', async () => {
    await setReadOnly(true);
    // The pool may first hand out a connection that was just ended; then one that is read-only.
    let logged: { err?: { message?: string } } | undefined;
    await eventually(
      async () => {
        const failed = await call(service.url, 'POST', '/v1/pause', { token: account.live, body: { title: 'Ship?' } });
        expect(failed.status).toBe(500);
        logged = service.logs
          .map((line) => JSON.parse(line))
          .find((e) => e.reqId === failed.body.error.request_id && e.err);
        expect(logged?.err?.message).toMatch(/read-only transaction/);
      },
      10_000,
      200,
    );
    const health = await call(service.url, 'GET', '/health');
    expect(health.status).toBe(503);
    expect(health.body).toEqual({
      status: 'unavailable',
      database: 'writes_failing',
      reason: 'database writes are failing: the database is read-only',
    });
    expect((await call(service.url, 'GET', '/v1/auth/me', { token: account.live })).status).toBe(200);

    await setReadOnly(false);
    await eventually(
      async () => {
        const created = await call(service.url, 'POST', '/v1/pause', { token: account.live, body: { title: 'Ship?' } });
        expect(created.status).toBe(201);
      },
      10_000,
      200,
    );
    const healthy = await call(service.url, 'GET', '/health');
    expect(healthy.status).toBe(200);
    expect(healthy.body).toEqual({ status: 'ok', database: 'ok' });
  }, 30_000);
});
