import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { prepared } from '../../src/store/prepared.js';
import { migrateToLatest, type Store } from '../../src/store/store.js';
import { freshDatabase, type TestDatabase } from '../helpers/database.js';
import { newSecretKey, openTestStore } from '../helpers/process.js';

// prepared(): the SQL is compiled once, and each run binds that run's values.

let database: TestDatabase;
let store: Store;
beforeAll(async () => {
  database = await freshDatabase();
  store = openTestStore(database.url, newSecretKey());
  await migrateToLatest(store);
});
afterAll(async () => {
  await store?.close();
  await database?.drop();
});

const insertDeveloper = prepared((db, input: { id: string; email: string }) =>
  db.insertInto('developers').values({
    id: input.id,
    email: input.email,
    password_hash: 'x',
    plan: 'free',
    created_at: '2026-11-26T00:00:00.000Z',
  }),
);

// The same input twice, and a value written in the query itself.
const renamed = prepared((db, input: { id: string; suffix: string }) =>
  db
    .updateTable('developers')
    .set({ email: input.suffix, plan: 'pro' })
    .where('id', '=', input.id)
    .where('email', '!=', input.suffix)
    .returning(['id', 'email', 'plan']),
);

it('runs the compiled SQL with each run’s own values', async () => {
  await insertDeveloper(store, { id: 'dev_p1', email: 'one@example.com' });
  await insertDeveloper(store, { id: 'dev_p2', email: 'two@example.com' });
  expect(await renamed(store, { id: 'dev_p2', suffix: 'new@example.com' })).toEqual([
    { id: 'dev_p2', email: 'new@example.com', plan: 'pro' },
  ]);
  // Run again with the value it now has: the second condition holds it back.
  expect(await renamed(store, { id: 'dev_p2', suffix: 'new@example.com' })).toEqual([]);
  const rows = await store.db.selectFrom('developers').select(['id', 'email', 'plan']).orderBy('id').execute();
  expect(rows.filter((row) => row.id.startsWith('dev_p'))).toEqual([
    { id: 'dev_p1', email: 'one@example.com', plan: 'free' },
    { id: 'dev_p2', email: 'new@example.com', plan: 'pro' },
  ]);
});

it('runs inside the transaction it is given', async () => {
  await expect(
    store.db.transaction().execute(async (trx) => {
      await insertDeveloper(store, { id: 'dev_p3', email: 'three@example.com' }, trx);
      throw new Error('roll back');
    }),
  ).rejects.toThrow('roll back');
  expect(await store.db.selectFrom('developers').select('id').where('id', '=', 'dev_p3').execute()).toEqual([]);
});

it('refuses an input used as SQL text rather than as a value', async () => {
  const byColumn = prepared((db, input: { column: string }) =>
    db.selectFrom('developers').select(sql.ref<string>(input.column).as('picked')),
  );
  await expect(byColumn(store, { column: 'email' })).rejects.toThrow(/input outside a value/);
});
