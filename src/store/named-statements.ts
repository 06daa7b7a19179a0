import type { ClientBase, QueryResult } from 'pg';

// PostgreSQL: the statements the code compiles once (prepared.ts, and the
// settle of a batch of deliveries) run as server-side prepared statements. A
// connection parses and plans each the first time it runs it, and then only
// binds new values: an unnamed statement is parsed, analysed and planned on
// every run, and that was a third of the server's CPU a webhook delivery
// (bench/RESULTS.md). Only texts named here are prepared, so a connection
// holds a bounded number of them, whatever the queries built on the fly.

const names = new Map<string, string>();

/** Marks a statement's text as one the code runs again and again: on PostgreSQL it is prepared per connection. */
export function nameStatement(text: string): void {
  if (!names.has(text)) names.set(text, `pausepoint_${names.size + 1}`);
}

type Query = (text: unknown, values?: unknown, callback?: unknown) => unknown;

/**
 * Makes a pool's new client run the named texts as prepared statements (the
 * pool's `connect` event). Kysely's driver calls `query(text, values)`; that
 * call alone is changed.
 *
 * A prepared `select *` or `returning *` fails with "cached plan must not
 * change result type" once another instance has migrated a column in: the
 * statement is named afresh on this connection, and run again at once when
 * no transaction was open (the failed run did nothing); inside a transaction
 * the error stands, and the next run prepares the new shape.
 */
export function prepareNamedStatements(client: ClientBase): void {
  const query = client.query.bind(client) as Query;
  /** This connection's statements named afresh, and how many there have been. */
  const renamed = new Map<string, string>();
  let renames = 0;
  const run = (name: string, text: string, values: unknown[]) => query({ name, text, values }) as Promise<QueryResult>;
  (client as { query: Query }).query = (text, values, callback) => {
    const name = typeof text === 'string' && callback === undefined ? names.get(text) : undefined;
    if (name === undefined || !Array.isArray(values)) return query(text, values, callback);
    const statement = text as string;
    const idle = client.getTransactionStatus() === 'I';
    return run(renamed.get(statement) ?? name, statement, values).catch((error: unknown) => {
      if (!isStalePlan(error)) throw error;
      renames++;
      const fresh = `${name}_${renames}`;
      renamed.set(statement, fresh);
      if (!idle) throw error;
      return run(fresh, statement, values);
    });
  };
}

/** PostgreSQL's refusal of a prepared statement whose result columns changed (a migration added one). */
const isStalePlan = (error: unknown) =>
  (error as { code?: string; routine?: string }).code === '0A000' &&
  (error as { routine?: string }).routine === 'RevalidateCachedQuery';
