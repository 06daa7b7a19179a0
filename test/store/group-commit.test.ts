import { afterAll, beforeAll, expect, it } from 'vitest';
import { migrateToLatest, type Store } from '../../src/store/store.js';
import { freshDatabase, type TestDatabase, testEngine } from '../helpers/database.js';
import { newSecretKey, openTestStore } from '../helpers/process.js';

// store.write(): on SQLite, writes issued together share one commit, and a
// group in which one fails runs again with each write in a savepoint
// (src/store/group-commit.ts); on PostgreSQL each is a transaction.
// Either way a caller sees its own write commit or fail, never another's.

let database: TestDatabase;
let store: Store;
/** A second connection: it sees only what was committed. */
let observer: Store;
beforeAll(async () => {
  database = await freshDatabase();
  const secretKey = newSecretKey();
  store = openTestStore(database.url, secretKey);
  await migrateToLatest(store);
  observer = openTestStore(database.url, secretKey);
});
afterAll(async () => {
  await store?.close();
  await observer?.close();
  await database?.drop();
});

const developer = (id: string, email = `${id}@example.com`) => ({
  id,
  email,
  password_hash: 'x',
  plan: 'free',
  created_at: '2026-11-26T00:00:00.000Z',
});
const committed = async (ids: string[]) =>
  (await observer.db.selectFrom('developers').select('id').where('id', 'in', ids).execute())
    .map((row) => row.id)
    .sort();

it('commits each write of a group, and rolls back only the one that failed, with its own error', async () => {
  const ids = ['dev_g1', 'dev_g2', 'dev_g3', 'dev_g4'];
  // The third write takes an email already taken. On SQLite the four share one transaction, so it
  // is dev_g1's, written in the same group. On PostgreSQL each is a transaction of its own and two
  // racing inserts of one email have no set winner, so it is one committed before.
  if (testEngine === 'postgres')
    await store.write((trx) => trx.insertInto('developers').values(developer('dev_g0')).execute());
  const takenEmail = testEngine === 'postgres' ? 'dev_g0@example.com' : 'dev_g1@example.com';
  const results = await Promise.allSettled([
    store.write(async (trx) => {
      await trx.insertInto('developers').values(developer('dev_g1')).execute();
      return 'first';
    }),
    store.write(async (trx) => {
      await trx.insertInto('developers').values(developer('dev_g2')).execute();
      throw new Error('changed my mind');
    }),
    // A constraint violation inside the group.
    store.write(async (trx) => {
      await trx.insertInto('developers').values(developer('dev_g3', takenEmail)).execute();
    }),
    store.write(async (trx) => {
      await trx.insertInto('developers').values(developer('dev_g4')).execute();
      // It sees what it wrote itself.
      return (await trx.selectFrom('developers').select('id').where('id', '=', 'dev_g4').executeTakeFirst())?.id;
    }),
  ]);
  expect(results[0]).toEqual({ status: 'fulfilled', value: 'first' });
  expect(results[1]).toMatchObject({ status: 'rejected', reason: { message: 'changed my mind' } });
  expect(results[2]).toMatchObject({ status: 'rejected', reason: { message: expect.stringMatching(/unique/i) } });
  expect(results[3]).toEqual({ status: 'fulfilled', value: 'dev_g4' });
  expect(await committed(ids)).toEqual(['dev_g1', 'dev_g4']);
});

it('answers a write only once it is committed', async () => {
  const seenAtAnswer = await Promise.all(
    ['dev_c1', 'dev_c2', 'dev_c3'].map((id) =>
      store
        .write(async (trx) => {
          await trx.insertInto('developers').values(developer(id)).execute();
        })
        .then(() => committed([id])),
    ),
  );
  expect(seenAtAnswer).toEqual([['dev_c1'], ['dev_c2'], ['dev_c3']]);
});

it('leaves nothing of a group that had to be run again but the writes of its second run', async () => {
  // Each work draws a fresh id, as creates and events do: were the first run
  // (the one with a failing write) not rolled back, its rows would remain too.
  let drawn = 0;
  const results = await Promise.allSettled(
    ['a', 'b', 'c'].map((name) =>
      store.write(async (trx) => {
        const id = `dev_r${name}${++drawn}`;
        await trx.insertInto('developers').values(developer(id)).execute();
        if (name === 'b') throw new Error('refused');
        return id;
      }),
    ),
  );
  const kept = results.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  expect(results[1]).toMatchObject({ status: 'rejected', reason: { message: 'refused' } });
  expect(kept).toHaveLength(2);
  const written = await observer.db.selectFrom('developers').select('id').where('id', 'like', 'dev_r%').execute();
  expect(written.map((row) => row.id).sort()).toEqual([...kept].sort());
});
