import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { sql } from 'kysely';
import { afterEach, expect, it } from 'vitest';
import { prepared } from '../../src/store/prepared.js';
import { migrateToLatest, openStore, type Store } from '../../src/store/store.js';
import { eventually } from '../helpers/pauses.js';

// The embedded SQLite store: its connection never checkpoints (that would
// fsync on the event loop); a worker thread copies the WAL into the database
// file instead. Both files are watched from outside.

let store: Store | undefined;
let folder: string | undefined;
afterEach(async () => {
  await store?.close();
  if (folder) rmSync(folder, { recursive: true, force: true });
});

const sizeOf = (file: string) => statSync(file, { throwIfNoEntry: false })?.size ?? 0;

it('writes to the WAL on commit and leaves the checkpoint to its own thread', async () => {
  folder = mkdtempSync(join(tmpdir(), 'pausepoint-sqlite-'));
  const path = join(folder, 'db.sqlite');
  store = openStore({ kind: 'sqlite', path });
  await migrateToLatest(store);

  const { rows } = await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(store.db);
  expect(rows[0]?.wal_autocheckpoint).toBe(0);

  const before = sizeOf(path);
  await sql`create table filler (id integer primary key, text text not null)`.execute(store.db);
  for (let i = 0; i < 500; i++) {
    await sql`insert into filler (text) values (${'x'.repeat(1000)})`.execute(store.db);
  }
  expect(sizeOf(`${path}-wal`)).toBeGreaterThan(500 * 1000);
  // About 500 KB of rows reach the database file without this connection checkpointing.
  await eventually(() => expect(sizeOf(path)).toBeGreaterThan(before + 500 * 1000), 5000);
  const { rows: count } = await sql<{ n: number }>`select count(*) as n from filler`.execute(store.db);
  expect(count[0]?.n).toBe(500);
});

it('has let go of its files once close() resolves, the checkpointer thread included', async () => {
  folder = mkdtempSync(join(tmpdir(), 'pausepoint-sqlite-'));
  const path = join(folder, 'db.sqlite');
  const closing = openStore({ kind: 'sqlite', path });
  await migrateToLatest(closing);
  // Long enough for the thread to have opened its connection and checkpointed.
  await new Promise((resolve) => setTimeout(resolve, 1000));
  await closing.close();
  // SQLite removes the WAL and shared-memory files when its last connection
  // closes; while the thread's connection stays open they remain.
  expect(existsSync(`${path}-wal`)).toBe(false);
  expect(existsSync(`${path}-shm`)).toBe(false);
});

it('lets a write that reads first wait for another process to commit, not fail', async () => {
  folder = mkdtempSync(join(tmpdir(), 'pausepoint-sqlite-'));
  const path = join(folder, 'db.sqlite');
  store = openStore({ kind: 'sqlite', path });
  await migrateToLatest(store);
  await sql`create table notes (id integer primary key, text text not null)`.execute(store.db);
  // Another process's connection (a worker thread: this one blocks in SQLite's
  // busy handler) takes the write lock, writes, and commits 200 ms later.
  const other = new Worker(
    `const { parentPort, workerData } = require('node:worker_threads');
     const db = new (require(workerData.driver))(workerData.path);
     db.exec("begin immediate; insert into notes (text) values ('other')");
     parentPort.postMessage('locked');
     Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
     db.exec('commit');
     db.close();`,
    { eval: true, workerData: { driver: createRequire(import.meta.url).resolve('better-sqlite3'), path } },
  );
  await once(other, 'message');
  // Read, then write: begun as a deferred transaction its read would take a
  // snapshot that the other commit makes stale, and the write would fail at
  // once with SQLITE_BUSY instead of waiting (busy_timeout).
  const counted = await store.write(async (trx) => {
    const { rows } = await sql<{ n: number }>`select count(*) as n from notes`.execute(trx);
    await sql`insert into notes (text) values ('mine')`.execute(trx);
    return rows[0]?.n;
  });
  await once(other, 'exit');
  expect(counted).toBe(1);
  const { rows } = await sql<{ text: string }>`select text from notes order by id`.execute(store.db);
  expect(rows.map((row) => row.text)).toEqual(['other', 'mine']);
});

it('gives rows as the driver would: every column by name, nulls, numbers, blobs, a repeated name its last value', async () => {
  folder = mkdtempSync(join(tmpdir(), 'pausepoint-sqlite-'));
  const path = join(folder, 'db.sqlite');
  store = openStore({ kind: 'sqlite', path });
  await sql`create table shapes (id integer primary key, name text, score real, data blob)`.execute(store.db);
  await sql`insert into shapes (name, score, data) values ('a', 1.5, x'0102'), (null, null, null)`.execute(store.db);
  const query = sql`select id, name, score, data, name as label, score as name from shapes order by id`;

  const { rows } = await query.execute(store.db);
  const Driver = createRequire(import.meta.url)('better-sqlite3');
  const direct = new Driver(path, { readonly: true });
  try {
    expect(rows).toEqual(direct.prepare(query.compile(store.db).sql).all());
  } finally {
    direct.close();
  }
  expect(rows).toEqual([
    { id: 1, name: 1.5, score: 1.5, data: Buffer.from([1, 2]), label: 'a' },
    { id: 2, name: null, score: null, data: null, label: null },
  ]);
  // A statement read again (from the cache), and streamed, gives the same rows.
  expect((await query.execute(store.db)).rows).toEqual(rows);
  const streamed: unknown[] = [];
  for await (const row of store.db
    .selectFrom('shapes' as never)
    .selectAll()
    .orderBy('id' as never)
    .stream()) {
    streamed.push(row);
  }
  expect(streamed).toEqual([
    { id: 1, name: 'a', score: 1.5, data: Buffer.from([1, 2]) },
    { id: 2, name: null, score: null, data: null },
  ]);
});

it('reads a prepared statement at once outside a transaction, and never sees a transaction not yet committed', async () => {
  folder = mkdtempSync(join(tmpdir(), 'pausepoint-sqlite-'));
  store = openStore({ kind: 'sqlite', path: join(folder, 'db.sqlite') });
  await migrateToLatest(store);
  const open = store;
  const developersNamed = prepared((db, input: { email: string }) =>
    db.selectFrom('developers').select('id').where('email', '=', input.email),
  );
  const developer = (id: string) => ({
    id,
    email: `${id}@example.com`,
    password_hash: 'x',
    plan: 'free',
    created_at: '2026-11-27T00:00:00.000Z',
    payment_customer_id: null,
    plan_status: null,
    plan_event_created: null,
  });
  // Outside a transaction: read on the connection at once.
  expect(open.readNow?.('select 1 as one', [])).toEqual([{ one: 1 }]);
  // A statement that writes (RETURNING reads too) is never run that way.
  expect(open.readNow?.("update developers set plan = 'pro' where id = 'none' returning id", [])).toBeUndefined();

  // A read made while a transaction has written and not committed waits for
  // it, and so never sees a row that is then rolled back.
  let readDuring: Promise<unknown[]> | undefined;
  await expect(
    open.transaction(async (trx) => {
      await trx.insertInto('developers').values(developer('dev_rolled_back')).execute();
      expect(open.readNow?.('select 1 as one', [])).toBeUndefined();
      readDuring = developersNamed(open, { email: 'dev_rolled_back@example.com' });
      throw new Error('roll back');
    }),
  ).rejects.toThrow('roll back');
  expect(await readDuring).toEqual([]);

  await open.transaction(async (trx) => {
    await trx.insertInto('developers').values(developer('dev_kept')).execute();
  });
  expect(await developersNamed(open, { email: 'dev_kept@example.com' })).toEqual([{ id: 'dev_kept' }]);
});
