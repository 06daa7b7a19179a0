import { createHash, randomBytes } from 'node:crypto';
import type { ClientBase, QueryResult } from 'pg';

// PostgreSQL: the statements the code compiles once (prepared.ts, and the
// settle of a batch of deliveries) run as server-side prepared statements. A
// connection parses and plans each the first time it runs it, and then only
// binds new values: an unnamed statement is parsed, analysed and planned on
// every run, and that was a third of the server's CPU a webhook delivery
// (bench/RESULTS.md). Only texts marked here are prepared, so a connection
// holds a bounded number of them, whatever the queries built on the fly.

const statementTexts = new Set<string>();

/** Marks a statement's text as one the code runs again and again: on PostgreSQL it is prepared per connection. */
export function nameStatement(text: string): void {
  statementTexts.add(text);
}

/**
 * How many times PostgreSQL has refused a prepared plan in this process
 * (see prepareNamedStatements). Every statement moves on together: a
 * migration that adds a column changes the shape of several.
 */
let generation = 0;

/**
 * Makes the texts of a later generation this process's own: a pooler that
 * keeps prepared statements (PgBouncer 1.21 and later) shares one per text
 * between its clients, and would answer the same stale one again.
 */
const PROCESS_TAG = randomBytes(6).toString('hex');

/** A statement as sent in a generation: named by its text's hash, so a name means one text in every process. */
function statementOf(text: string, inGeneration: number): { name: string; text: string } {
  const sent = inGeneration === 0 ? text : `${text}\n/* prepared again: ${PROCESS_TAG}.${inGeneration} */`;
  return { name: `pausepoint_${createHash('sha256').update(sent).digest('hex').slice(0, 32)}`, text: sent };
}

/** Each text's statement of the current generation, kept so that the hash is taken once. */
let statements = new Map<string, { name: string; text: string }>();
function currentStatement(text: string) {
  let statement = statements.get(text);
  if (statement === undefined) {
    statement = statementOf(text, generation);
    statements.set(text, statement);
  }
  return statement;
}

type Query = (text: unknown, values?: unknown, callback?: unknown) => unknown;

/**
 * Makes a pool's new client run the marked texts as prepared statements (the
 * pool's `connect` event). Kysely's driver calls `query(text, values)`; that
 * call alone is changed.
 *
 * A prepared `select *` or `returning *` fails with "cached plan must not
 * change result type" once a migration has added a column. Every statement
 * then moves on to a new generation, new names and texts, on every
 * connection of the process, and the refused run is repeated at once when no
 * transaction was open (it did nothing). Inside a transaction the error
 * stands, and the store runs the transaction's work again (store.ts).
 */
export function prepareNamedStatements(client: ClientBase): void {
  const query = client.query.bind(client) as Query;
  (client as { query: Query }).query = (text, values, callback) => {
    if (typeof text !== 'string' || !statementTexts.has(text) || callback !== undefined || !Array.isArray(values)) {
      return query(text, values, callback);
    }
    const runGeneration = generation;
    const idle = client.getTransactionStatus() === 'I';
    const run = () => query({ ...currentStatement(text), values }) as Promise<QueryResult>;
    return run().catch((error: unknown) => {
      if (!isStalePlan(error)) throw error;
      // Runs refused together move the statements on once.
      if (generation === runGeneration) {
        generation++;
        statements = new Map();
      }
      if (!idle) throw error;
      return run();
    });
  };
}

/** PostgreSQL's refusal of a prepared statement whose result columns changed (a migration added one). */
export const isStalePlan = (error: unknown) =>
  (error as { code?: string } | null)?.code === '0A000' &&
  (error as { routine?: string }).routine === 'RevalidateCachedQuery';
