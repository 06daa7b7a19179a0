import { CompiledQuery, type Kysely } from 'kysely';
import type { Database } from './schema.js';
import type { Dialect, Store } from './store.js';

/**
 * Inserts one whole row into `table` with SQL that Kysely compiles once per
 * dialect. Kysely otherwise builds, freezes and compiles a fresh query tree on
 * every call, and for a row of many columns that costs more than SQLite's own
 * work (a pause: ~30 µs of ~40). `columns` names every column, so the
 * compiler sees all of them and their order is the parameters' order.
 */
export function compiledInsert<T extends keyof Database & string>(
  table: T,
  columns: Record<keyof Database[T] & string, true>,
): (store: Store, db: Kysely<Database>, row: Database[T]) => Promise<void> {
  const names = Object.keys(columns) as Array<keyof Database[T] & string>;
  const texts = new Map<Dialect, string>();
  const parametersOf = (row: Database[T]) => names.map((name) => row[name]);

  function textFor(store: Store, row: Database[T]): string {
    let text = texts.get(store.dialect);
    if (text === undefined) {
      const ordered = Object.fromEntries(names.map((name) => [name, row[name]]));
      const compiled = store.db
        .insertInto(table)
        .values(ordered as never)
        .compile();
      if (compiled.parameters.length !== names.length) {
        throw new Error(
          `compiledInsert(${table}): expected one parameter per column, got ${compiled.parameters.length}`,
        );
      }
      text = compiled.sql;
      texts.set(store.dialect, text);
    }
    return text;
  }

  return async (store, db, row) => {
    await db.executeQuery(CompiledQuery.raw(textFor(store, row), parametersOf(row)));
  };
}
