// Filling the database with pauses: through the API (autocannon, fixed
// count), or straight into the tables with the row shape of the create action
// (src/actions/create-pause.ts buildRow), through the project's own store.
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import type { Form } from '../../src/domain/form.js';
import { DEFAULT_OPTIONS } from '../../src/domain/pause.js';
import { encodePause } from '../../src/store/decode.js';
import { withoutReviewers, withoutTypedAnswers } from '../../src/store/pauses.js';
import type { PausesTable, ReviewersTable } from '../../src/store/schema.js';
import { openStore, type Store } from '../../src/store/store.js';
import { runLoad } from './load.js';
import type { BenchDatabase } from './service.js';

/** The project's store over the benchmark database, from the benchmark process. */
export function openBenchStore(database: BenchDatabase): Store {
  if (database.kind === 'sqlite') return openStore({ kind: 'sqlite', path: database.url.slice('sqlite:'.length) });
  return openStore({ kind: 'postgres', url: database.url, preparedStatements: true });
}

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

/**
 * A pause id as src/domain/ids.ts makes them (10 base32 characters of
 * milliseconds, 16 random), from one randomBytes call per batch for speed.
 */
export const pauseIds = (count: number, now: number): string[] => ids('pause', count, now);

/** Ids with `prefix` as src/domain/ids.ts makes them, `count` at a time. */
function ids(prefix: string, count: number, now: number): string[] {
  let time = '';
  for (let rest = now, i = 0; i < 10; i++, rest = Math.floor(rest / 32)) time = ALPHABET[rest % 32] + time;
  const bytes = randomBytes(count * 16);
  const made: string[] = [];
  for (let n = 0; n < count; n++) {
    let random = '';
    for (let i = 0; i < 16; i++) random += ALPHABET[bytes[n * 16 + i]! % 32];
    made.push(`${prefix}_${time}${random}`);
  }
  return made;
}

export interface PendingPauseInput {
  developerId: string;
  mode: 'live' | 'test';
  expiresAt: string;
  title: string;
  /** A form to answer, as create stores `form` (already valid). */
  form?: Form;
}

/** The row the create route stores for {title, expires_at} (and `form`, when given), pending. */
export function pendingPauseRow(input: PendingPauseInput, id: string, createdAt: string): PausesTable {
  return encodePause({
    id,
    developerId: input.developerId,
    mode: input.mode,
    status: 'pending',
    title: input.title,
    body: null,
    options: DEFAULT_OPTIONS,
    allowText: false,
    expiresAt: input.expiresAt,
    timeoutDefault: null,
    metadata: {},
    notify: null,
    responseChoice: null,
    responseText: null,
    responseAt: null,
    createdAt,
    updatedAt: createdAt,
    ...withoutReviewers(),
    ...withoutTypedAnswers(),
    form: input.form ?? null,
  });
}

/**
 * Inserts `count` pending pauses owned by the developer in transactions of
 * `batch` rows, as the create route would have stored them for
 * {title, expires_at} (the n-th with `titleOf(n)` when given). Returns how
 * long it took, and with `keepIds` the ids.
 */
export async function insertPausesDirectly(
  store: Store,
  input: PendingPauseInput & { count: number; keepIds?: boolean; titleOf?: (n: number) => string },
  batch = 500,
): Promise<{ seconds: number; ids: string[] }> {
  const started = performance.now();
  const kept: string[] = [];
  for (let done = 0; done < input.count; done += batch) {
    const size = Math.min(batch, input.count - done);
    const now = new Date();
    const createdAt = now.toISOString();
    const ids = pauseIds(size, now.getTime());
    if (input.keepIds) kept.push(...ids);
    const rows = ids.map((id, i) =>
      pendingPauseRow({ ...input, title: input.titleOf?.(done + i) ?? input.title }, id, createdAt),
    );
    await store.db.transaction().execute((trx) => trx.insertInto('pauses').values(rows).execute());
  }
  return { seconds: (performance.now() - started) / 1000, ids: kept };
}

/** A pending pause with reviewers, as the benchmark needs it: its id and its reviewers' ids in order. */
export interface ReviewedPause {
  id: string;
  reviewerIds: string[];
}

/**
 * Inserts `count` pending pauses with `reviewers` reviewers each and the
 * given quorum (no veto, reminders or escalation), as the create route stores
 * {title, expires_at, reviewers, quorum}; the first `voted` reviewers of each
 * have already voted "approve". Returns how long it took and the pauses.
 */
export async function insertReviewedPausesDirectly(
  store: Store,
  input: PendingPauseInput & { count: number; reviewers: number; quorum: number; voted: number },
  batch = 250,
): Promise<{ seconds: number; pauses: ReviewedPause[] }> {
  const started = performance.now();
  const pauses: ReviewedPause[] = [];
  for (let done = 0; done < input.count; done += batch) {
    const size = Math.min(batch, input.count - done);
    const now = new Date();
    const createdAt = now.toISOString();
    const pauseRows = pauseIds(size, now.getTime()).map(
      (id): PausesTable => ({
        ...pendingPauseRow(input, id, createdAt),
        quorum: input.quorum,
        veto: '[]',
      }),
    );
    const reviewerRows: ReviewersTable[] = [];
    for (const pause of pauseRows) {
      const reviewerIds = ids('rvw', input.reviewers, now.getTime());
      pauses.push({ id: pause.id, reviewerIds });
      reviewerIds.forEach((id, position) => {
        const voted = position < input.voted;
        reviewerRows.push({
          id,
          pause_id: pause.id,
          position,
          email: `reviewer${position}@example.com`,
          name: null,
          added_by: 'create',
          added_at: createdAt,
          vote_choice: voted ? 'approve' : null,
          vote_text: null,
          voted_at: voted ? createdAt : null,
          vote_values: null,
        });
      });
    }
    await store.db.transaction().execute(async (trx) => {
      await trx.insertInto('pauses').values(pauseRows).execute();
      await trx.insertInto('reviewers').values(reviewerRows).execute();
    });
  }
  return { seconds: (performance.now() - started) / 1000, pauses };
}

/** Creates exactly `count` pauses through POST /v1/pause, `connections` at a time. */
export async function createPausesThroughApi(input: {
  baseUrl: string;
  key: string;
  count: number;
  body: object;
  connections?: number;
  title: string;
}) {
  return runLoad({
    title: input.title,
    url: `${input.baseUrl}/v1/pause`,
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${input.key}` },
    body: JSON.stringify(input.body),
    connections: input.connections ?? 10,
    amount: input.count,
  });
}

/** A developer row to own pauses inserted straight into the database (no keys, no password). */
export async function insertDeveloper(store: Store, id: string): Promise<void> {
  await store.db
    .insertInto('developers')
    .values({
      id,
      email: `${id}@example.com`,
      password_hash: 'x',
      plan: 'free',
      created_at: new Date().toISOString(),
      payment_customer_id: null,
      plan_status: null,
      plan_event_created: null,
    })
    .execute();
}

/**
 * SQLite: waits (at most `timeoutS`) until the service's worker has put every
 * pause's title into the text index (store/pause-search.ts indexNewTitles),
 * so that a run does not pay for indexing pauses inserted before it; returns
 * the seconds waited.
 */
export async function titlesIndexed(store: Store, timeoutS = 120): Promise<number> {
  const started = performance.now();
  for (;;) {
    const { rows } = await sql<{ behind: number }>`
      select (select max(rowid) from pauses) - last_rowid as behind from pause_titles_progress`.execute(store.db);
    const waited = (performance.now() - started) / 1000;
    if (rows[0]?.behind === 0) return waited;
    if (waited > timeoutS)
      throw new Error(`the title index was still ${rows[0]?.behind} pauses behind after ${timeoutS} s`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
