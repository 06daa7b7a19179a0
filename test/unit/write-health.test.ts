import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { sql } from 'kysely';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { migrateToLatest, openStore, type Store } from '../../src/store/store.js';

// What counts as the write path failing, and what clears it, on a real SQLite
// store whose connection is capped at its file's size (SQLITE_FULL on growth).

let store: Store;
let folder: string;
beforeEach(async () => {
  folder = mkdtempSync(join(tmpdir(), 'pausepoint-write-health-'));
  store = openStore({ kind: 'sqlite', path: join(folder, 'db.sqlite') });
  await migrateToLatest(store);
  await sql`create table notes (id integer primary key, text text not null unique)`.execute(store.db);
  await sql`insert into notes (text) values ('first')`.execute(store.db);
});
afterEach(async () => {
  await store.close();
  rmSync(folder, { recursive: true, force: true });
});

const big = () => `${Math.random()}`.repeat(1000);
const insert = (text: string) => store.write((trx) => sql`insert into notes (text) values (${text})`.execute(trx));
async function fillDisk() {
  const { rows } = await sql<{ page_count: number }>`pragma page_count`.execute(store.db);
  await sql.raw(`pragma max_page_count = ${rows[0]!.page_count}`).execute(store.db);
}
const freeDisk = () => sql.raw('pragma max_page_count = 1073741823').execute(store.db);

it('is not marked failing by errors of the write itself', async () => {
  await expect(insert('first')).rejects.toMatchObject({ code: 'SQLITE_CONSTRAINT_UNIQUE' });
  await expect(store.write((trx) => sql`insert into nowhere values (1)`.execute(trx))).rejects.toThrow();
  expect(await store.writeFailure()).toBeUndefined();
});

it('is not marked failing by a lock another process holds past busy_timeout', async () => {
  const other = new Database(join(folder, 'db.sqlite'));
  try {
    other.exec('begin immediate');
    await sql.raw('pragma busy_timeout = 50').execute(store.db);
    await expect(insert(big())).rejects.toMatchObject({ code: 'SQLITE_BUSY' });
    expect(await store.writeFailure()).toBeUndefined();
  } finally {
    other.exec('rollback');
    other.close();
  }
});

it('is marked failing by a full disk, and cleared only by a write that commits a change', async () => {
  await fillDisk();
  await expect(insert(big())).rejects.toMatchObject({ code: 'SQLITE_FULL', message: 'database or disk is full' });
  expect(await store.writeFailure()).toBe('database or disk is full');

  await freeDisk();
  // Reads, and transactions that change nothing, commit even on a full disk: they prove nothing.
  await sql`select count(*) from notes`.execute(store.db);
  await store.write((trx) => sql`select 1`.execute(trx));
  await store.write((trx) => sql`update notes set text = 'x' where id = -1`.execute(trx));
  await sql`delete from notes where id = -1`.execute(store.db);
  expect(await store.writeFailure()).toBe('database or disk is full');

  await insert(big());
  expect(await store.writeFailure()).toBeUndefined();
});

it('is cleared by a change outside a transaction too', async () => {
  await fillDisk();
  await expect(insert(big())).rejects.toMatchObject({ code: 'SQLITE_FULL' });
  await freeDisk();
  await sql`insert into notes (text) values (${big()})`.execute(store.db);
  expect(await store.writeFailure()).toBeUndefined();
});
