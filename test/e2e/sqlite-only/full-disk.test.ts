import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Account, call, registerAccount } from '../../helpers/http.js';
import { createPause, eventually } from '../../helpers/pauses.js';
import { startTestService, type TestService } from '../../helpers/service.js';

// When SQLite's disk is full while the database still answers reads: failed
// requests are logged with the database's own error, and /health says writes
// are failing until a write succeeds again. The PostgreSQL case is
// postgres-only/read-only-database.test.ts.

const bigBody = 'x'.repeat(9_000);

describe('a full disk (SQLite)', () => {
  let service: TestService;
  let account: Account;
  let pauseIds: string[];
  beforeAll(async () => {
    service = await startTestService();
    account = await registerAccount(service.url);
    pauseIds = [];
    for (let i = 0; i < 5; i += 1) pauseIds.push((await createPause(service.url, account.live)).id);
  });
  afterAll(() => service?.destroy());

  /**
   * Waits until the worker has put every pause's title into the text index, which it does a moment
   * after each create. Were that write to come after the disk "fills", it could succeed in free
   * pages (the file has some since migration 0014) and mark writes healthy again under the test.
   */
  const titlesIndexed = () =>
    eventually(async () => {
      const { rows } = await sql<{ behind: number }>`
        select (select max(rowid) from pauses) - last_rowid as behind from pause_titles_progress`.execute(
        service.store.db,
      );
      expect(rows[0]?.behind).toBe(0);
    }, 15_000);

  /**
   * Caps the service's own connection at the file's current size, so any growth fails with SQLITE_FULL.
   * The file's free pages (a migration that remade a table leaves some) would take a write without
   * growing it: they are used up first, by a blob of their size.
   */
  const fillDisk = async () => {
    await titlesIndexed(); // each test's creates included
    const db = service.store.db;
    const pragma = async (name: string) =>
      Number(Object.values((await sql.raw(`pragma ${name}`).execute(db)).rows[0] as object)[0]);
    const free = await pragma('freelist_count');
    if (free > 0) {
      await sql`create table if not exists disk_filler (data blob)`.execute(db);
      await sql`insert into disk_filler (data) values (zeroblob(${free * (await pragma('page_size'))}))`.execute(db);
    }
    await sql.raw(`pragma max_page_count = ${await pragma('page_count')}`).execute(db);
  };
  const freeDisk = () => sql.raw('pragma max_page_count = 1073741823').execute(service.store.db);
  // A test that fails with the disk full would fail the next ones too.
  afterEach(async () => {
    await freeDisk();
  });

  it('logs the original error, answers /health 503 with the reason, and recovers after a write', async () => {
    await fillDisk();
    const failed = await call(service.url, 'POST', '/v1/pause', {
      token: account.live,
      body: { title: 'Fits?', body: bigBody },
    });
    expect(failed.status).toBe(500);
    expect(failed.body.error.code).toBe('internal_error');
    expect(failed.text).not.toMatch(/disk|sqlite/i);

    const logged = service.logs
      .map((line) => JSON.parse(line))
      .find((e) => e.reqId === failed.body.error.request_id && e.err);
    expect(logged?.err?.message).toBe('database or disk is full');
    expect(service.logs.join('\n')).not.toMatch(/cannot rollback|no such savepoint/);

    const health = await call(service.url, 'GET', '/health');
    expect(health.status).toBe(503);
    expect(health.body).toEqual({
      status: 'unavailable',
      database: 'writes_failing',
      reason: 'database writes are failing: database or disk is full',
    });

    // Reads still work meanwhile.
    expect((await call(service.url, 'GET', '/v1/auth/me', { token: account.live })).status).toBe(200);

    await freeDisk();
    await createPause(service.url, account.live, { body: bigBody });
    const healthy = await call(service.url, 'GET', '/health');
    expect(healthy.status).toBe(200);
    expect(healthy.body).toEqual({ status: 'ok', database: 'ok' });
  });

  it('fails writes that share a commit with the original error, and commits them once there is room', async () => {
    // Writes issued in the same turn share one transaction (group commit).
    const grouped = () =>
      Promise.allSettled(
        pauseIds.map((id) =>
          service.store.write((trx) => trx.updateTable('pauses').set({ body: bigBody }).where('id', '=', id).execute()),
        ),
      );
    await fillDisk();
    const failed = await grouped();
    for (const outcome of failed) {
      expect(outcome.status).toBe('rejected');
      expect((outcome as PromiseRejectedResult).reason.message).toBe('database or disk is full');
    }
    expect((await call(service.url, 'GET', '/health')).status).toBe(503);
    await freeDisk();
    expect((await grouped()).map((outcome) => outcome.status)).toEqual(pauseIds.map(() => 'fulfilled'));
    expect((await call(service.url, 'GET', '/health')).status).toBe(200);
  });

  it('probes the write path from /health when no write comes, so it recovers on its own', async () => {
    await fillDisk();
    const failed = await call(service.url, 'POST', '/v1/pause', {
      token: account.live,
      body: { title: 'Fits?', body: bigBody },
    });
    expect(failed.status).toBe(500);
    expect((await call(service.url, 'GET', '/health')).status).toBe(503);
    await freeDisk();
    // Health checks do not write on every call: the probe waits for 5 s without a write.
    expect((await call(service.url, 'GET', '/health')).status).toBe(503);
    await eventually(
      async () => {
        expect((await call(service.url, 'GET', '/health')).status).toBe(200);
      },
      15_000,
      500,
    );
  }, 30_000);
});
