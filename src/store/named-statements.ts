import { randomBytes } from 'node:crypto';
import type { ClientBase, QueryResult } from 'pg';

// PostgreSQL: the statements the code compiles once (prepared.ts, and the
// settle of a batch of deliveries) run as server-side prepared statements. A
// connection parses and plans each the first time it runs it, and then only
// binds new values: an unnamed statement is parsed, analysed and planned on
// every run, and that was a third of the server's CPU a webhook delivery
// (bench/RESULTS.md). Only texts named here are prepared, so a connection
// holds a bounded number of them, whatever the queries built on the fly.

interface Named {
  name: string;
  /** How many times PostgreSQL refused the statement's plan in this process (see below). */
  generation: number;
}

const names = new Map<string, Named>();

/** Marks a statement's text as one the code runs again and again: on PostgreSQL it is prepared per connection. */
export function nameStatement(text: string): void {
  if (!names.has(text)) names.set(text, { name: `pausepoint_${names.size + 1}`, generation: 0 });
}

/**
 * Makes the texts of a later generation this process's own: a pooler that
 * keeps prepared statements (PgBouncer 1.21 and later) shares one per text
 * between its clients, and would answer the same stale one again.
 */
const PROCESS = randomBytes(6).toString('hex');

type Query = (text: unknown, values?: unknown, callback?: unknown) => unknown;

/**
 * Makes a pool's new client run the named texts as prepared statements (the
 * pool's `connect` event). Kysely's driver calls `query(text, values)`; that
 * call alone is changed.
 *
 * A prepared `select *` or `returning *` fails with "cached plan must not
 * change result type" once another instance has migrated a column in. The
 * statement then moves on to a new generation, a new name and text, for
 * every connection of the process, and the run is repeated at once when no
 * transaction was open (the refused run did nothing). Inside a transaction
 * the error stands: only the runs already under way on other connections
 * meet it too.
 */
export function prepareNamedStatements(client: ClientBase): void {
  const query = client.query.bind(client) as Query;
  const run = (named: Named, generation: number, text: string, values: unknown[]) =>
    generation === 0
      ? (query({ name: named.name, text, values }) as Promise<QueryResult>)
      : (query({
          name: `${named.name}_${generation}`,
          text: `${text}\n/* prepared again: ${PROCESS}.${generation} */`,
          values,
        }) as Promise<QueryResult>);
  (client as { query: Query }).query = (text, values, callback) => {
    const named = typeof text === 'string' && callback === undefined ? names.get(text) : undefined;
    if (named === undefined || !Array.isArray(values)) return query(text, values, callback);
    const statement = text as string;
    const generation = named.generation;
    const idle = client.getTransactionStatus() === 'I';
    return run(named, generation, statement, values).catch((error: unknown) => {
      if (!isStalePlan(error)) throw error;
      // Runs refused together move the statement on once.
      if (named.generation === generation) named.generation++;
      if (!idle) throw error;
      return run(named, named.generation, statement, values);
    });
  };
}

/** PostgreSQL's refusal of a prepared statement whose result columns changed (a migration added one). */
const isStalePlan = (error: unknown) =>
  (error as { code?: string }).code === '0A000' && (error as { routine?: string }).routine === 'RevalidateCachedQuery';
