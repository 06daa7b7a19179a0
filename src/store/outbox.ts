import {
  type Compilable,
  CompiledQuery,
  type Expression,
  type ExpressionBuilder,
  type Kysely,
  type OperationNodeSource,
  type RawBuilder,
  sql,
} from 'kysely';
import { newId } from '../domain/ids.js';
import type { AttemptOutcome } from '../domain/retry-schedule.js';
import { insertAttempts, type NewDeliveryAttempt, streakUpdate } from './delivery-attempts.js';
import { PENDING } from './literals.js';
import { nameStatement } from './named-statements.js';
import { prepared } from './prepared.js';
import type { Database } from './schema.js';
import type { Dialect, Store } from './store.js';
import { announceWorkQueued } from './wake-ups.js';

// The work queues in the database: webhook deliveries and human notifications
// share these columns (status, attempts, next_attempt_at, last_status_code,
// last_error, updated_at, completed_at) and this code.
//
// next_attempt_at doubles as the claim lease: claiming a row counts the
// attempt and moves next_attempt_at to the end of the lease, so a worker that
// dies mid-attempt leaves a row that simply falls due again.

export type OutboxTable = 'deliveries' | 'notifications';

export interface Claim {
  id: string;
  attempts: number;
}

/** The status a settled row gets: deliveries succeed, notifications are sent. */
const DONE: Record<OutboxTable, string> = { deliveries: 'succeeded', notifications: 'sent' };

// Both tables have the queue columns; Kysely is told it is looking at one of
// them, and every query names the real table.
type Queue = Pick<Database, 'deliveries'>;
const queue = (db: Kysely<Database>) => db as unknown as Kysely<Queue>;

/**
 * What a worker needs of its claimed rows: on PostgreSQL selected in the
 * claiming statement itself, from its UPDATE's RETURNING (as the CTE
 * `claimed`: all the table's columns, and `claim_rank` and `claim_due`, by
 * which the claim chose its rows, to answer them in that order); on SQLite
 * loaded after the claim, in the order of `claims`. One object for the life of
 * the process (its statement is compiled once).
 */
export interface ClaimLoader<T extends Claim> {
  selectClaimed(claimed: Compilable & OperationNodeSource): RawBuilder<T>;
  load(store: Store, claims: Claim[]): Promise<T[]>;
}

type ClaimInput = { now: string; leaseUntil: string; limit: number };

/**
 * Claims up to `limit` due rows, shared fairly between developers (see
 * fairlyDue). On PostgreSQL rows being claimed elsewhere are skipped. With a
 * loader, answers what it loads of them. Deliveries (on SQLite every claim)
 * are answered in the order the claim chose them: round by round, oldest due
 * first.
 */
export async function claimDue(store: Store, table: OutboxTable, input: ClaimInput): Promise<Claim[]>;
export async function claimDue<T extends Claim>(
  store: Store,
  table: OutboxTable,
  input: ClaimInput,
  loader: ClaimLoader<T>,
): Promise<T[]>;
export async function claimDue<T extends Claim>(
  store: Store,
  table: OutboxTable,
  input: ClaimInput,
  loader?: ClaimLoader<T>,
): Promise<Claim[] | T[]> {
  // Fewer due rows than a batch: taking them all is fair already, and the
  // oldest-first scan is cheaper than the fair one. Asked before the claim's
  // transaction: in SQLite a read before the write would make it a deferred
  // transaction that fails ("database is locked") when another process writes.
  const [due] = await dueNow[table](store, input);
  const count = Number(due?.due ?? 0);
  if (count === 0) return []; // most wake-ups: no write transaction for nothing
  // Sharing matters only when a full batch is due and more than one developer waits.
  const backlog = count === input.limit && Boolean(due?.others);
  // On PostgreSQL the one UPDATE, with its locking subquery, is atomic on its
  // own: sent without BEGIN and COMMIT it costs one round trip, not three;
  // with a loader the same statement answers what is loaded (one round trip, not two).
  if (store.dialect === 'postgres' && loader) {
    const rows = backlog
      ? (await loader.selectClaimed(claimingInOrder(store.db, table, true, input)).execute(store.db)).rows
      : await claimingWith(loader, table)(store, input);
    for (const row of rows) row.attempts = Number(row.attempts);
    return rows;
  }
  if (store.dialect === 'postgres') {
    const claimed = backlog
      ? await claiming(store.db, table, store.dialect, true, input).returning(['id', 'attempts']).execute()
      : await claimOldest[table](store, input);
    return claimed.map((row) => ({ id: row.id, attempts: Number(row.attempts) }));
  }
  // SQLite takes the write lock at BEGIN IMMEDIATE (sqlite.ts says why).
  // Under it the rows are chosen, then claimed, and answered in the order
  // chosen: an UPDATE's RETURNING has no set order, and a worker attempts its
  // rows claimed ahead in the order answered.
  const claims = await store.transaction(async (trx) => {
    const chosen = backlog
      ? await fairlyDue(queue(trx), table, store.dialect, input.now, input.limit).execute()
      : await chooseOldest[table](store, input, trx);
    if (chosen.length === 0) return [];
    const claimed = await queue(trx)
      .updateTable(table as 'deliveries')
      .set((eb) => claimColumns(eb('attempts', '+', 1), input))
      .where(
        'id',
        'in',
        chosen.map((row) => row.id),
      )
      .returning(['id', 'attempts'])
      .execute();
    const attempts = new Map(claimed.map((row) => [row.id, Number(row.attempts)]));
    return chosen.map((row) => ({ id: row.id, attempts: attempts.get(row.id) as number }));
  });
  return loader && claims.length > 0 ? loader.load(store, claims) : claims;
}

/** What a claim sets: the attempt counted (`attempts`, the column's reference plus one), and the lease. */
const claimColumns = (attempts: Expression<number>, input: ClaimInput) => ({
  attempts,
  next_attempt_at: input.leaseUntil,
  updated_at: input.now,
});

/** The claiming UPDATE: the due rows (fairly shared when `fair`) get their attempt counted and the lease. */
function claiming(trx: Kysely<Database>, table: OutboxTable, dialect: Dialect, fair: boolean, input: ClaimInput) {
  const db = queue(trx);
  let due = fair ? fairlyDue(db, table, dialect, input.now, input.limit) : oldestDue(db, table, input.now, input.limit);
  if (dialect === 'postgres') due = due.forUpdate('d').skipLocked();
  return db
    .updateTable(table as 'deliveries')
    .set((eb) => claimColumns(eb('attempts', '+', 1), input))
    .where('id', 'in', due);
}

/**
 * PostgreSQL: the claiming UPDATE, answering all the columns of the rows it
 * claimed and, as claim_rank and claim_due, the round (fair) and due time by
 * which it chose them. UPDATE ... FROM, as its RETURNING cannot see a subquery
 * of its WHERE. The window function that ranks a fair claim is in a CTE
 * (fairlyDue), so the locking subquery has none.
 */
function claimingInOrder(trx: Kysely<Database>, table: OutboxTable, fair: boolean, input: ClaimInput) {
  const db = queue(trx);
  const due = fair
    ? fairlyDue(db, table, 'postgres', input.now, input.limit).select([
        'c.rank as claim_rank',
        'd.next_attempt_at as claim_due',
      ])
    : oldestDue(db, table, input.now, input.limit).select([
        sql<number>`1`.as('claim_rank'),
        'd.next_attempt_at as claim_due',
      ]);
  return db
    .updateTable(from(table, 'q'))
    .from(due.forUpdate('d').skipLocked().as('picked'))
    .set((eb) => claimColumns(eb('q.attempts', '+', 1), input))
    .whereRef('q.id', '=', 'picked.id')
    .returningAll('q')
    .returning(['picked.claim_rank', 'picked.claim_due']);
}

// The statements of every claim, compiled once (prepared.ts): the fair
// claim, built only while several developers have a backlog, is not.
const claimOldestOf = (table: OutboxTable) =>
  prepared((db, input: ClaimInput, dialect) =>
    claiming(db, table, dialect, false, input).returning(['id', 'attempts']),
  );
const claimOldest = { deliveries: claimOldestOf('deliveries'), notifications: claimOldestOf('notifications') };
const chooseOldestOf = (table: OutboxTable) =>
  prepared((db, input: ClaimInput) => oldestDue(queue(db), table, input.now, input.limit));
const chooseOldest = { deliveries: chooseOldestOf('deliveries'), notifications: chooseOldestOf('notifications') };
const dueNowOf = (table: OutboxTable) =>
  prepared((db, input: { now: string; limit: number }) => dueNowQuery(db, table, input.now, input.limit));
const dueNow = { deliveries: dueNowOf('deliveries'), notifications: dueNowOf('notifications') };
const claimsWith = new WeakMap<ClaimLoader<Claim>, Record<OutboxTable, ReturnType<typeof claimWithOf>>>();
const claimWithOf = <T extends Claim>(loader: ClaimLoader<T>, table: OutboxTable) =>
  prepared((db, input: ClaimInput) => {
    const statement = loader.selectClaimed(claimingInOrder(db, table, false, input));
    return { compile: () => statement.compile(db) };
  });
function claimingWith<T extends Claim>(loader: ClaimLoader<T>, table: OutboxTable) {
  let statements = claimsWith.get(loader);
  if (!statements) {
    statements = { deliveries: claimWithOf(loader, 'deliveries'), notifications: claimWithOf(loader, 'notifications') };
    claimsWith.set(loader, statements);
  }
  return statements[table] as (store: Store, input: ClaimInput) => Promise<T[]>;
}

const from = <A extends string>(table: OutboxTable, alias: A) => `${table} as ${alias}` as `deliveries as ${A}`;

function oldestDue(db: Kysely<Queue>, table: OutboxTable, now: string, limit: number) {
  return db
    .selectFrom(from(table, 'd'))
    .select('d.id')
    .where('d.status', '=', PENDING)
    .where('d.next_attempt_at', '<=', now)
    .orderBy('d.next_attempt_at')
    .limit(limit);
}

/**
 * How many rows are due, up to `limit` (the oldest-first scan), and, when
 * that many are, whether a developer other than one of theirs has a due row:
 * in one statement. The latter is two EXISTS over the (developer_id,
 * next_attempt_at) index, one for the owners before and one for those after:
 * they read only other developers' index entries. Written with an OR in one
 * WHERE, SQLite walked every due row instead, the backlog of the one
 * developer included (1.6 ms a claim with 10k due).
 */
function dueNowQuery(db: Kysely<Database>, table: OutboxTable, now: string, limit: number) {
  type Due = Queue & { due: { developer_id: string }; first: { due: number; developer_id: string | null } };
  const dueOfOthers = (eb: ExpressionBuilder<Due, 'first'>, side: '<' | '>') =>
    eb.exists(
      eb
        .selectFrom(from(table, 'd'))
        .select(sql`1`.as('one'))
        .where('d.status', '=', PENDING)
        .whereRef('d.developer_id', side, 'first.developer_id')
        .where('d.next_attempt_at', '<=', now),
    );
  return (queue(db) as unknown as Kysely<Due>)
    .with('due', (qc) => oldestDue(qc as unknown as Kysely<Queue>, table, now, limit).select('d.developer_id'))
    .with('first', (qc) =>
      qc
        .selectFrom('due')
        .select((eb) => [eb.fn.countAll<number>().as('due'), eb.fn.min('due.developer_id').as('developer_id')]),
    )
    .selectFrom('first')
    .select((eb) => [
      'first.due',
      eb
        .case()
        .when('first.due', '=', limit)
        .then(eb.or([dueOfOthers(eb, '<'), dueOfOthers(eb, '>')]))
        .else(sql<boolean>`false`)
        .end()
        .as('others'),
    ]);
}

// Fair claiming: every developer with due rows gets its oldest one into the
// batch before any developer gets a second, and so on, so one developer's
// backlog (or slow receiver) cannot starve the others' deliveries.
//
// Its cost is bounded by the batch and by the number of developers with
// pending rows, not by the backlog; each step probes the index on
// (developer_id, next_attempt_at) of pending rows (migration 0007):
//   1. owners: the developers with pending rows, one probe each (a recursive
//      "loose index scan": neither engine skips through an index by itself,
//      and a GROUP BY would read every due row), and one more probe each for
//      when their oldest pending row fell due;
//   2. of those, the `limit` developers due longest;
//   3. the oldest due rows of each, up to a pool of twice the batch: a LATERAL
//      join on PostgreSQL; SQLite has no LATERAL, so a correlated IN (which
//      PostgreSQL would re-run for every row);
//   4. ROW_NUMBER per developer over those (at most 2 × limit² rows) orders
//      them, round by round, and the pool keeps the first 2 × limit.
// PostgreSQL locks no rows of a query with window functions, so the ranking is
// a CTE and the outer query locks; the pool is twice the batch so that rows
// another instance holds locked are skipped and the batch still fills.
function fairlyDue(db: Kysely<Queue>, table: OutboxTable, dialect: Dialect, now: string, limit: number) {
  const pool = 2 * limit;
  const candidates = db
    // Seeded with '', which sorts before every id; each step finds the next owner.
    .withRecursive('walk(developer_id)', (qc) =>
      qc.selectNoFrom(sql<string | null>`''`.as('developer_id')).unionAll(
        qc
          .selectFrom('walk')
          .select((eb) =>
            eb
              .selectFrom(from(table, 'x'))
              .select('x.developer_id')
              .where('x.status', '=', PENDING)
              .whereRef('x.developer_id', '>', 'walk.developer_id')
              .orderBy('x.developer_id')
              .limit(1)
              .as('developer_id'),
          )
          .where('walk.developer_id', 'is not', null),
      ),
    )
    // Materialized, so that each owner's oldest row is looked up once.
    .with(
      (cte) => cte('owners').materialized(),
      (qc) =>
        qc
          .selectFrom('walk')
          .select((eb) => [
            'walk.developer_id',
            eb
              .selectFrom(from(table, 'x'))
              .select((inner) => inner.fn.min('x.next_attempt_at').as('oldest'))
              .where('x.status', '=', PENDING)
              .whereRef('x.developer_id', '=', 'walk.developer_id')
              .as('oldest'),
          ])
          .where('walk.developer_id', '>', ''),
    )
    .with('due_owners', (qc) =>
      qc
        .selectFrom('owners')
        .select('owners.developer_id')
        .where('owners.oldest', '<=', now)
        .orderBy('owners.oldest')
        .limit(limit),
    )
    .with('candidates', (qc) => {
      const dueOf = (eb: ExpressionBuilder<Queue & { o: { developer_id: string | null } }, 'o'>) =>
        eb
          .selectFrom(from(table, 'x'))
          .where('x.status', '=', PENDING)
          .where('x.next_attempt_at', '<=', now)
          .whereRef('x.developer_id', '=', 'o.developer_id')
          .orderBy('x.next_attempt_at')
          .limit(pool);
      const owners = qc.selectFrom('due_owners as o');
      const rows =
        dialect === 'postgres'
          ? owners.innerJoinLateral(
              (eb) => dueOf(eb).select(['x.id', 'x.developer_id', 'x.next_attempt_at']).as('c'),
              (join) => join.onTrue(),
            )
          : owners.innerJoin(from(table, 'c'), (join) => join.on('c.id', 'in', (eb) => dueOf(eb).select('x.id')));
      return rows
        .select((eb) => [
          'c.id',
          'c.next_attempt_at',
          eb.fn
            .agg<number>('row_number')
            .over((over) => over.partitionBy('c.developer_id').orderBy('c.next_attempt_at'))
            .as('rank'),
        ])
        .orderBy('rank')
        .orderBy('c.next_attempt_at')
        .limit(pool);
    });
  // A cross join keeps SQLite's planner from driving the join from every due
  // row (it joins a cross join in the order written); PostgreSQL plans it freely.
  return candidates
    .selectFrom('candidates as c')
    .crossJoin(from(table, 'd'))
    .whereRef('d.id', '=', 'c.id')
    .select('d.id')
    .where('d.status', '=', PENDING)
    .where('d.next_attempt_at', '<=', now)
    .orderBy('c.rank')
    .orderBy('c.next_attempt_at')
    .limit(limit);
}

/** At most this many rows in one settling UPDATE. */
const SETTLE_CHUNK = 100;

/**
 * Records many successful attempts at once (on SQLite one commit, not one per
 * row). As settle(), a row is only settled if its claim is still ours: one
 * UPDATE per status code and attempt count, usually one in all, matching ids
 * with IN. (An OR of (id, attempts) pairs cost SQLite O(rows²): every row
 * found was tested against every pair.) Answers the claims settled, as id →
 * attempt count: one worker may hold two claims of a row (an older one whose
 * lease ran out, and the newer), and only the newer is settled.
 */
export async function settleSucceeded(
  store: Store,
  table: OutboxTable,
  rows: Array<{ claim: Claim; statusCode: number | null; attempt?: NewDeliveryAttempt | undefined }>,
  now: string,
  trx?: Kysely<Database>,
): Promise<Map<string, number>> {
  // The attempts kept are written with the settle. On PostgreSQL, deliveries
  // that all have one are settled by one statement (settleDeliveriesSucceeded);
  // otherwise the attempts share the UPDATEs' transaction (on SQLite its
  // commit is shared with the other writes of the moment).
  if (store.dialect === 'postgres' && trx === undefined && table === 'deliveries' && rows.every((row) => row.attempt)) {
    return settleDeliveriesSucceeded(store, rows, now);
  }
  // A receiver that answered 2xx ends its webhook's failing streak, whether
  // or not the claim was still ours (streakUpdate).
  if (trx === undefined && rows.some((row) => row.attempt)) {
    return store.write(async (trx) => {
      const settled = await settleSucceeded(store, table, rows, now, trx);
      await insertAttempts(trx, attemptsOf(rows, settled));
      await streakUpdate(trx, attemptsOf(rows, undefined), false)?.execute();
      return settled;
    });
  }
  const db = trx ?? store.db;
  const settled = new Map<string, number>();
  const groups = new Map<string, { statusCode: number | null; attempts: number; rows: typeof rows }>();
  for (const row of rows) {
    const key = `${row.statusCode}:${row.claim.attempts}`;
    const group = groups.get(key);
    if (group) group.rows.push(row);
    else groups.set(key, { statusCode: row.statusCode, attempts: row.claim.attempts, rows: [row] });
  }
  for (const { statusCode, attempts, rows: grouped } of groups.values()) {
    for (let start = 0; start < grouped.length; start += SETTLE_CHUNK) {
      const chunk = grouped.slice(start, start + SETTLE_CHUNK);
      const update = queue(db)
        .updateTable(table as 'deliveries')
        .set(outcomeColumns(table, { kind: 'succeeded', statusCode }, now))
        .where('status', '=', PENDING)
        .where('attempts', '=', attempts)
        .where(
          'id',
          'in',
          chunk.map((row) => row.claim.id),
        )
        .returning('id');
      for (const { id } of await update.execute()) settled.set(id, attempts);
    }
  }
  return settled;
}

/**
 * PostgreSQL: settleSucceeded for deliveries that all have their attempt
 * kept. One statement of fixed text for the lot, whatever their status codes
 * and attempt counts, its values passed as one array per column: it settles
 * each delivery whose claim is still ours (id and attempt count, still
 * pending), writes the attempts of the claims it settled, and ends their
 * webhooks' failing streaks. Kysely builds nothing and the driver sends 13
 * values, where a VALUES list of eight per row cost more CPU than the
 * deliveries' POSTs around it. A batch is at most a few hundred rows.
 */
async function settleDeliveriesSucceeded(
  store: Store,
  rows: Array<{ claim: Claim; statusCode: number | null; attempt?: NewDeliveryAttempt | undefined }>,
  now: string,
): Promise<Map<string, number>> {
  const parameters = settleDeliveriesParameters(rows, now);
  const { rows: settled } = await store.db.executeQuery<{ id: string; attempts: number | string }>(
    CompiledQuery.raw(SETTLE_DELIVERIES_SQL, parameters),
  );
  return new Map(settled.map((row) => [row.id, Number(row.attempts)]));
}

/** SETTLE_DELIVERIES_SQL's 13 values for these successes (one array a column); every row has its attempt. */
export function settleDeliveriesParameters(
  rows: Array<{ claim: Claim; statusCode: number | null; attempt?: NewDeliveryAttempt | undefined }>,
  now: string,
): unknown[] {
  const attempts = rows.map((row) => row.attempt as NewDeliveryAttempt);
  const column = <K extends keyof NewDeliveryAttempt>(key: K) => attempts.map((attempt) => attempt[key]);
  return [
    rows.map((row) => row.claim.id),
    rows.map((row) => row.claim.attempts),
    rows.map((row) => row.statusCode),
    now,
    [...new Set(column('webhook_id'))],
    rows.map(() => newId('att')),
    column('delivery_id'),
    column('webhook_id'),
    column('at'),
    column('duration_ms'),
    column('status_code'),
    column('response_body'),
    column('error'),
  ];
}

// An attempt row is kept only for the claim settled: joined on the delivery
// and the claim's attempt count ($2: an attempt a row, in the same order), as
// the same delivery may be in the batch twice.
export const SETTLE_DELIVERIES_SQL = `
with settled as (
  update deliveries set status = 'succeeded', updated_at = $4, last_status_code = c.status_code,
    last_error = null, next_attempt_at = null, completed_at = $4
  from unnest($1::text[], $2::integer[], $3::integer[]) as c (id, attempts, status_code)
  where deliveries.id = c.id and deliveries.attempts = c.attempts and deliveries.status = 'pending'
  returning deliveries.id, deliveries.attempts
), streak as (
  update webhooks set failing_since = null where id = any($5::text[]) and failing_since is not null
), kept as (
  insert into delivery_attempts (id, delivery_id, webhook_id, at, duration_ms, status_code, response_body, error)
  select a.id, a.delivery_id, a.webhook_id, a.at, a.duration_ms, a.status_code, a.response_body, a.error
  from unnest($6::text[], $7::text[], $8::text[], $9::text[], $10::integer[], $11::integer[], $12::text[], $13::text[],
      $2::integer[])
    as a (id, delivery_id, webhook_id, at, duration_ms, status_code, response_body, error, claim_attempts)
  join settled on settled.id = a.delivery_id and settled.attempts = a.claim_attempts
)
select id, attempts from settled`;
nameStatement(SETTLE_DELIVERIES_SQL);

/**
 * PostgreSQL: runs a settling UPDATE and writes the attempts of the rows it
 * settled, and their webhooks' failing streaks (`failed`: the attempts
 * failed), in one statement. Answers the ids settled.
 */
async function settleWithAttempts(
  db: Kysely<Database>,
  update: Compilable & OperationNodeSource,
  attempts: NewDeliveryAttempt[],
  failed: boolean,
): Promise<string[]> {
  const streak = streakUpdate(db, attempts, failed);
  const values = sql.join(
    attempts.map(
      (attempt) =>
        sql`(${newId('att')}, ${attempt.delivery_id}, ${attempt.webhook_id}, ${attempt.at}, ${attempt.duration_ms}::integer, ${attempt.status_code}::integer, ${attempt.response_body}, ${attempt.error})`,
    ),
  );
  const { rows } = await sql<{ delivery_id: string }>`
    with settled as (${update})${streak ? sql`, streak as (${streak})` : sql``}
    insert into delivery_attempts (id, delivery_id, webhook_id, at, duration_ms, status_code, response_body, error)
    select v.* from (values ${values})
      as v (id, delivery_id, webhook_id, at, duration_ms, status_code, response_body, error)
    join settled on settled.id = v.delivery_id
    returning delivery_id`.execute(db);
  return rows.map((row) => row.delivery_id);
}

/** The attempts kept of the claims that were settled (all when `settled` is not given). */
function attemptsOf(
  rows: Array<{ claim: Claim; attempt?: NewDeliveryAttempt | undefined }>,
  settled: Map<string, number> | undefined,
) {
  const attempts: NewDeliveryAttempt[] = [];
  for (const { claim, attempt } of rows) {
    if (attempt && (!settled || settled.get(claim.id) === claim.attempts)) attempts.push(attempt);
  }
  return attempts;
}

/** The queue columns an attempt's outcome sets. */
function outcomeColumns(table: OutboxTable, outcome: AttemptOutcome, now: string) {
  const base = {
    updated_at: now,
    last_status_code: outcome.statusCode,
    last_error: outcome.kind === 'succeeded' ? null : outcome.error,
  };
  if (outcome.kind === 'retry') return { ...base, next_attempt_at: outcome.nextAttemptAt };
  const status = outcome.kind === 'succeeded' ? DONE[table] : outcome.kind;
  return { ...base, status: status as 'succeeded', next_attempt_at: null, completed_at: now };
}

/**
 * Records an attempt's outcome, only if the claim is still ours (same attempt
 * count, still pending): a claim whose lease ran out may have been taken over.
 */
export async function settle(
  store: Store,
  table: OutboxTable,
  claim: Claim,
  outcome: AttemptOutcome,
  now: string,
  attempt?: NewDeliveryAttempt,
  trx?: Kysely<Database>,
): Promise<boolean> {
  // With the attempt kept, as settleSucceeded: one statement on PostgreSQL, one transaction on SQLite.
  // A failed attempt starts its webhook's failing streak, a success ends it (streakUpdate).
  const failed = outcome.kind !== 'succeeded';
  if (attempt && trx === undefined && store.dialect !== 'postgres') {
    return store.write(async (trx) => {
      const settled = await settle(store, table, claim, outcome, now, undefined, trx);
      if (settled) await insertAttempts(trx, [attempt]);
      await streakUpdate(trx, [attempt], failed)?.execute();
      return settled;
    });
  }
  const update = queue(trx ?? store.db)
    .updateTable(table as 'deliveries')
    .set(outcomeColumns(table, outcome, now))
    .where('id', '=', claim.id)
    .where('attempts', '=', claim.attempts)
    .where('status', '=', PENDING);
  if (attempt && trx === undefined) {
    return (await settleWithAttempts(store.db, update.returning('id'), [attempt], failed)).length === 1;
  }
  const result = await update.executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * Hands back claimed rows that were not attempted, in one statement: due
 * again at once, their attempt uncounted. Not a row whose claim is no longer
 * this worker's (its lease ran out and another took it).
 */
export async function release(store: Store, table: OutboxTable, claims: Claim[]): Promise<void> {
  if (claims.length === 0) return;
  await queue(store.db)
    .updateTable(table as 'deliveries')
    .set((eb) => ({ attempts: eb('attempts', '-', 1), next_attempt_at: sql<string>`updated_at` }))
    .where(
      'id',
      'in',
      claims.map((claim) => claim.id),
    )
    .where((eb) =>
      eb(
        eb.refTuple('id', 'attempts'),
        'in',
        claims.map((claim) => eb.tuple(claim.id, claim.attempts)),
      ),
    )
    .where('status', '=', PENDING)
    .execute();
}

/** When the next pending row falls due, if any. */
export async function nextDue(
  store: Store,
  table: OutboxTable,
  trx: Kysely<Database> = store.db,
): Promise<string | null> {
  const row = await queue(trx)
    .selectFrom(table as 'deliveries')
    .select((eb) => eb.fn.min('next_attempt_at').as('next'))
    .where('status', '=', PENDING)
    .executeTakeFirst();
  return (row?.next as string | null | undefined) ?? null;
}

/** What requeueFailed writes over a failed row: due now, attempts from zero. */
export const requeuedFields = (now: string) =>
  ({ status: 'pending', attempts: 0, next_attempt_at: now, completed_at: null, updated_at: now }) as const;

/**
 * Puts a failed row back in the queue for a fresh round of attempts; a
 * delivery only while its webhook is active (the caller checked, but the
 * webhook may have been disabled since).
 */
export async function requeueFailed(
  store: Store,
  table: OutboxTable,
  id: string,
  now: string,
  trx: Kysely<Database> = store.db,
): Promise<boolean> {
  let update = (trx as unknown as Kysely<Pick<Database, 'deliveries' | 'webhooks'>>)
    .updateTable(table as 'deliveries')
    .set(requeuedFields(now))
    .where('id', '=', id)
    .where('status', '=', 'failed');
  if (table === 'deliveries') {
    update = update.where(({ exists, selectFrom }) =>
      exists(
        selectFrom('webhooks')
          .select('webhooks.id')
          .whereRef('webhooks.id', '=', 'deliveries.webhook_id')
          .where('webhooks.disabled_at', 'is', null),
      ),
    );
  }
  const result = await update.executeTakeFirst();
  if (Number(result.numUpdatedRows) !== 1) return false;
  await announceWorkQueued(store, trx);
  return true;
}
