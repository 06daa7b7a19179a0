import type { Kysely } from 'kysely';
import type { Vote } from '../domain/events.js';
import type { JsonObject } from '../domain/form.js';
import { prepared } from './prepared.js';
import type { Database, ReviewersTable } from './schema.js';
import type { Store } from './store.js';

// The reviewers of pauses. Their votes are cast in transitions.ts, the one
// place a pause's outcome is decided.

/** A reviewer's own vote, once cast. */
export interface OwnVote {
  choice: string;
  text: string | null;
  /** The vote's own values, when its choice submits the pause's form. */
  values: JsonObject | null;
  voted_at: string;
}

export const ownVote = (reviewer: ReviewersTable): OwnVote | null =>
  reviewer.voted_at === null
    ? null
    : {
        choice: reviewer.vote_choice ?? '',
        text: reviewer.vote_text,
        values: reviewer.vote_values === null ? null : (JSON.parse(reviewer.vote_values) as JsonObject),
        voted_at: reviewer.voted_at,
      };

/** A reviewer's vote as counted on the pause, once cast. */
export const voteOf = (reviewer: ReviewersTable): Vote | null => {
  const vote = ownVote(reviewer);
  return vote && { reviewer_id: reviewer.id, email: reviewer.email, ...vote };
};

export async function insertReviewers(
  store: Store,
  rows: ReviewersTable[],
  trx: Kysely<Database> = store.db,
): Promise<void> {
  if (rows.length > 0) await trx.insertInto('reviewers').values(rows).execute();
}

const selectReviewer = prepared((db, input: { pauseId: string; reviewerId: string }) =>
  db.selectFrom('reviewers').selectAll().where('id', '=', input.reviewerId).where('pause_id', '=', input.pauseId),
);

/** One reviewer of one pause: read for every vote, so prepared once. */
export const getReviewer = async (
  store: Store,
  input: { pauseId: string; reviewerId: string },
  trx?: Kysely<Database>,
): Promise<ReviewersTable | undefined> => (await selectReviewer(store, input, trx))[0];

/** The reviewers of these pauses, grouped by pause, in the order they were added. */
export async function reviewersOf(
  store: Store,
  pauseIds: string[],
  trx: Kysely<Database> = store.db,
): Promise<Map<string, ReviewersTable[]>> {
  const byPause = new Map<string, ReviewersTable[]>();
  if (pauseIds.length === 0) return byPause;
  const rows = await trx
    .selectFrom('reviewers')
    .selectAll()
    .where('pause_id', 'in', pauseIds)
    .orderBy('pause_id')
    .orderBy('position')
    .execute();
  for (const row of rows) byPause.set(row.pause_id, [...(byPause.get(row.pause_id) ?? []), row]);
  return byPause;
}

/** How many reviewers a pause has, and how many have voted. */
export async function tallyOf(
  store: Store,
  pauseId: string,
  trx: Kysely<Database> = store.db,
): Promise<{ reviewers: number; votes: number }> {
  const row = await trx
    .selectFrom('reviewers')
    .select((eb) => [eb.fn.countAll<number>().as('reviewers'), eb.fn.count<number>('voted_at').as('votes')])
    .where('pause_id', '=', pauseId)
    .executeTakeFirstOrThrow();
  return { reviewers: Number(row.reviewers), votes: Number(row.votes) };
}
