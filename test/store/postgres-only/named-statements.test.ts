import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.js';
import { prepared } from '../../../src/store/prepared.js';
import { migrateToLatest, openStore, type Store } from '../../../src/store/store.js';
import { freshDatabase, type TestDatabase } from '../../helpers/database.js';
import { newSecretKey, openTestStore } from '../../helpers/process.js';

// On PostgreSQL with DATABASE_PREPARED_STATEMENTS=on (the default), the
// statements the code compiles once are prepared per connection
// (src/store/named-statements.ts).

let database: TestDatabase;
let store: Store;
/** Another instance: it migrates a column in under the first one's prepared statements. */
let other: Store;
beforeAll(async () => {
  database = await freshDatabase('postgres');
  const secretKey = newSecretKey();
  store = openTestStore(database.url, secretKey);
  await migrateToLatest(store);
  other = openTestStore(database.url, secretKey);
  await store.db
    .insertInto('developers')
    .values({ id: 'dev_n1', email: 'n1@example.com', password_hash: 'x', plan: 'free', created_at: 'now' })
    .execute();
});
afterAll(async () => {
  await store?.close();
  await other?.close();
  await database?.drop();
});

/** Another instance's migration: a column added to developers, which changes the shape of its `select *`. */
const migrateColumnIn = (column: string) =>
  sql`alter table developers add column ${sql.id(column)} text`.execute(other.db);

// All the columns: the shape a migration changes.
const developerById = prepared((db, input: { id: string }) =>
  db.selectFrom('developers').selectAll().where('id', '=', input.id),
);

const preparedHere = async (connection: Store['db']) =>
  (
    await sql<{
      statement: string;
    }>`select statement from pg_prepared_statements where name like 'pausepoint_%'`.execute(connection)
  ).rows.map((row) => row.statement);

it('prepares a compiled statement once on a connection and binds each run’s values to it', async () => {
  await store.db.connection().execute(async (connection) => {
    const [first] = await developerById(store, { id: 'dev_n1' }, connection);
    expect(first).toMatchObject({ id: 'dev_n1', email: 'n1@example.com' });
    expect(await developerById(store, { id: 'dev_none' }, connection)).toEqual([]);
    const statements = await preparedHere(connection);
    expect(statements.filter((text) => text.includes('from "developers"'))).toHaveLength(1);
  });
});

it('runs a prepared statement again when another instance migrated a column in, outside a transaction', async () => {
  await store.db.connection().execute(async (connection) => {
    await developerById(store, { id: 'dev_n1' }, connection);
    await migrateColumnIn('migrated_in');
    // PostgreSQL refuses the old plan ("cached plan must not change result type"); the run is repeated, prepared anew.
    const [row] = await developerById(store, { id: 'dev_n1' }, connection);
    expect(row).toMatchObject({ id: 'dev_n1', migrated_in: null });
  });
});

it('fails once inside a transaction, and prepares the new shape on the next run', async () => {
  await store.db.connection().execute(async (connection) => {
    await developerById(store, { id: 'dev_n1' }, connection);
    await migrateColumnIn('migrated_again');
    await expect(
      connection.transaction().execute((trx) => developerById(store, { id: 'dev_n1' }, trx)),
    ).rejects.toThrow(/cached plan must not change result type/);
    const [row] = await developerById(store, { id: 'dev_n1' }, connection);
    expect(row).toMatchObject({ id: 'dev_n1', migrated_again: null });
  });
});

it('fails only the transactions under way: every connection of the process then prepares the new shape', async () => {
  await store.db.connection().execute((first) =>
    store.db.connection().execute(async (second) => {
      await developerById(store, { id: 'dev_n1' }, first);
      await developerById(store, { id: 'dev_n1' }, second);
      await migrateColumnIn('migrated_twice');
      await expect(first.transaction().execute((trx) => developerById(store, { id: 'dev_n1' }, trx))).rejects.toThrow(
        /cached plan must not change result type/,
      );
      const [row] = await second.transaction().execute((trx) => developerById(store, { id: 'dev_n1' }, trx));
      expect(row).toMatchObject({ id: 'dev_n1', migrated_twice: null });
      // Under a text of this process's own, which a pooler keeping prepared statements cannot confuse with the old.
      const statements = await preparedHere(second);
      expect(statements.some((text) => text.includes('/* prepared again: '))).toBe(true);
    }),
  );
});

const touchDeveloper = prepared((db, input: { id: string }) =>
  db.updateTable('developers').set({ plan: 'free' }).where('id', '=', input.id).returningAll(),
);

it('moves every statement on at the first refusal: the next transaction runs, whichever statements it uses', async () => {
  await store.db.connection().execute(async (connection) => {
    const readAndTouch = () =>
      connection.transaction().execute(async (trx) => {
        await developerById(store, { id: 'dev_n1' }, trx);
        return (await touchDeveloper(store, { id: 'dev_n1' }, trx))[0];
      });
    await readAndTouch();
    await migrateColumnIn('migrated_for_both');
    await expect(readAndTouch()).rejects.toThrow(/cached plan must not change result type/);
    expect(await readAndTouch()).toMatchObject({ id: 'dev_n1', migrated_for_both: null });
  });
});

/** Both statements prepared on every connection the pool holds, so that a write meets a stale plan whichever it gets. */
const preparedOnEveryConnection = () =>
  Promise.all(
    Array.from({ length: 4 }, () =>
      store.db.connection().execute(async (connection) => {
        await developerById(store, { id: 'dev_n1' }, connection);
        await touchDeveloper(store, { id: 'dev_n1' }, connection);
      }),
    ),
  );

it('runs a store.write or store.transaction again when it met a plan a migration made stale: the caller sees it commit', async () => {
  await preparedOnEveryConnection();
  await migrateColumnIn('migrated_under_write');
  let runs = 0;
  let hooksRun = 0;
  const [touched] = await store.write(async (trx) => {
    runs++;
    store.afterCommit(trx, () => {
      hooksRun++;
    });
    await developerById(store, { id: 'dev_n1' }, trx);
    return touchDeveloper(store, { id: 'dev_n1' }, trx);
  });
  expect(touched).toMatchObject({ id: 'dev_n1', migrated_under_write: null });
  // It met the stale plan and ran again; the first run's hook went with its rollback.
  expect({ runs, hooksRun }).toEqual({ runs: 2, hooksRun: 1 });
  await preparedOnEveryConnection();
  await migrateColumnIn('migrated_under_transaction');
  runs = 0;
  const [again] = await store.transaction(async (trx) => {
    runs++;
    return touchDeveloper(store, { id: 'dev_n1' }, trx);
  });
  expect(again).toMatchObject({ id: 'dev_n1', migrated_under_transaction: null });
  expect(runs).toBe(2);
});

it('prepares nothing with DATABASE_PREPARED_STATEMENTS=off', async () => {
  const unprepared = openStore(
    loadConfig({ DATABASE_URL: database.url, SECRET_KEY: newSecretKey(), DATABASE_PREPARED_STATEMENTS: 'off' })
      .database,
  );
  try {
    await unprepared.db.connection().execute(async (connection) => {
      const [row] = await developerById(unprepared, { id: 'dev_n1' }, connection);
      expect(row).toMatchObject({ id: 'dev_n1' });
      expect(await preparedHere(connection)).toEqual([]);
    });
  } finally {
    await unprepared.close();
  }
});
