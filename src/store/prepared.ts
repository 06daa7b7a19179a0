import { type Compilable, CompiledQuery, type Kysely } from 'kysely';
import { nameStatement } from './named-statements.js';
import type { Database } from './schema.js';
import type { Dialect, Store } from './store.js';

/**
 * A query that Kysely builds and compiles once per dialect and then runs with
 * new values. Kysely otherwise builds, freezes and compiles a fresh query tree
 * on every call, and for the hottest statements that costs more than the
 * database's own work (a pause insert: ~30 µs of ~40).
 *
 * `build` gets stand-ins for the inputs: read each by name (`input.id`, never
 * a spread) and use it as one plain value (compared, set or inserted), never
 * as an identifier or a list. A stand-in found in the SQL text is refused at
 * the first compile. Values written literally in `build` stay as they are.
 * On PostgreSQL the text is also named (named-statements.ts): each connection
 * prepares it once.
 */
export function prepared<Input extends object, Row>(
  build: (db: Kysely<Database>, input: Input, dialect: Dialect) => Compilable<Row>,
): (store: Store, input: Input, trx?: Kysely<Database>) => Promise<Row[]> {
  const compiled = new Map<Dialect, { sql: string; slots: Slot[] }>();

  function compile(store: Store) {
    let query = compiled.get(store.dialect);
    if (!query) {
      const { sql, parameters } = build(store.db, standIns<Input>(), store.dialect).compile();
      if (sql.includes(STAND_IN)) throw new Error(`prepared query uses an input outside a value: ${sql}`);
      const slots = parameters.map((value): Slot => {
        const input = typeof value === 'string' && value.startsWith(STAND_IN) ? value.slice(STAND_IN.length) : null;
        return input === null ? { value } : { input };
      });
      query = { sql, slots };
      if (store.dialect === 'postgres') nameStatement(sql);
      compiled.set(store.dialect, query);
    }
    return query;
  }

  return async (store, input, trx = store.db) => {
    const { sql, slots } = compile(store);
    const values = input as Record<string, unknown>;
    const parameters = slots.map((slot) => ('input' in slot ? values[slot.input] : slot.value));
    const rows = trx === store.db ? store.readNow?.(sql, parameters) : undefined;
    if (rows) return rows as Row[];
    return (await trx.executeQuery<Row>(CompiledQuery.raw(sql, parameters))).rows;
  };
}

type Slot = { input: string } | { value: unknown };

/** Starts every stand-in: no real value begins with a NUL (the API refuses U+0000). */
const STAND_IN = '\u0000prepared-input:';

/** An object whose every property is the stand-in naming it. */
const standIns = <Input extends object>(): Input =>
  new Proxy({} as Input, { get: (_target, name) => `${STAND_IN}${String(name)}` });
