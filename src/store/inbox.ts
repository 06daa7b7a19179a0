import { newId } from '../domain/ids.js';
import { issueInboxLinkToken, issueInboxToken } from '../domain/keys.js';
import type { Pause, PauseStatus } from '../domain/pause.js';
import { decodePause } from './decode.js';
import type { InboxSessionsTable, ReviewersTable } from './schema.js';
import type { Store } from './store.js';

// The reviewers' inbox (migration 0011): single-use sign-in links, the
// sessions they start, and the reviewer rows an inbox lists. A reviewer is
// their (lower-cased) email address; only live pauses are ever read here, as
// test mode notifies no human.

export type InboxSession = Pick<InboxSessionsTable, 'id' | 'email' | 'last_used_at' | 'expires_at'>;

/** A new sign-in link for the address; returns its token (shown only in the email). Its old links go. */
export async function createInboxLink(
  store: Store,
  input: { email: string; now: string; expiresAt: string },
): Promise<string> {
  const token = issueInboxLinkToken();
  await store.transaction(async (trx) => {
    await trx
      .deleteFrom('inbox_links')
      .where('email', '=', input.email)
      .where((eb) => eb.or([eb('expires_at', '<=', input.now), eb('used_at', 'is not', null)]))
      .execute();
    await trx
      .insertInto('inbox_links')
      .values({
        id: newId('ilink'),
        email: input.email,
        token_hash: token.hash,
        created_at: input.now,
        expires_at: input.expiresAt,
        used_at: null,
      })
      .execute();
  });
  return token.plaintext;
}

/** Whether a link with this hash could still sign someone in (for the confirm page; uses nothing up). */
export const findUsableInboxLink = (store: Store, tokenHash: string, now: string) =>
  store.db
    .selectFrom('inbox_links')
    .select(['id', 'email'])
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();

/**
 * Uses the link up, in one statement: of two requests with the same link
 * only one gets its email back. Undefined for a used, expired or unknown link.
 */
export async function consumeInboxLink(store: Store, tokenHash: string, now: string): Promise<string | undefined> {
  const row = await store.db
    .updateTable('inbox_links')
    .set({ used_at: now })
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .returning('email')
    .executeTakeFirst();
  return row?.email;
}

/** A new session for the address; returns the cookie's token (shown only now). Its expired sessions go. */
export async function createInboxSession(
  store: Store,
  input: { email: string; now: string; expiresAt: string },
): Promise<{ token: string; session: InboxSession }> {
  const token = issueInboxToken();
  const session = { id: newId('isess'), email: input.email, last_used_at: input.now, expires_at: input.expiresAt };
  await store.transaction(async (trx) => {
    await trx
      .deleteFrom('inbox_sessions')
      .where('email', '=', input.email)
      .where('expires_at', '<=', input.now)
      .execute();
    await trx
      .insertInto('inbox_sessions')
      .values({ ...session, token_hash: token.hash, created_at: input.now })
      .execute();
  });
  return { token: token.plaintext, session };
}

/** The unexpired session whose token has this hash. */
export const findInboxSession = (store: Store, tokenHash: string, now: string) =>
  store.db
    .selectFrom('inbox_sessions')
    .select(['id', 'email', 'last_used_at', 'expires_at'])
    .where('token_hash', '=', tokenHash)
    .where('expires_at', '>', now)
    .executeTakeFirst() as Promise<InboxSession | undefined>;

/** Whether any live pause names this address as a reviewer (by the reviewers_email index). */
export async function isLiveReviewer(store: Store, email: string): Promise<boolean> {
  const row = await store.db
    .selectFrom('reviewers')
    .innerJoin('pauses', 'pauses.id', 'reviewers.pause_id')
    .select('reviewers.id')
    .where('reviewers.email', '=', email)
    .where('pauses.mode', '=', 'live')
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * The live pauses that still wait for this reviewer's vote: pending, not past
 * their deadline, not voted on by them; soonest deadline first.
 */
export async function waitingForReviewer(
  store: Store,
  input: { email: string; now: string; limit: number },
): Promise<Array<{ pause: Pause; reviewer: ReviewersTable; askedBy: string }>> {
  const reviewers = await store.db
    .selectFrom('reviewers')
    .innerJoin('pauses', 'pauses.id', 'reviewers.pause_id')
    .selectAll('reviewers')
    .where('reviewers.email', '=', input.email)
    .where('reviewers.voted_at', 'is', null)
    .where('pauses.mode', '=', 'live')
    .where('pauses.status', '=', 'pending')
    .where('pauses.expires_at', '>', input.now)
    .orderBy('pauses.expires_at')
    .orderBy('pauses.id')
    .limit(input.limit)
    .execute();
  if (reviewers.length === 0) return [];
  const pauses = await store.db
    .selectFrom('pauses')
    .innerJoin('developers', 'developers.id', 'pauses.developer_id')
    .selectAll('pauses')
    .select('developers.email as asked_by')
    .where(
      'pauses.id',
      'in',
      reviewers.map((r) => r.pause_id),
    )
    .execute();
  const byId = new Map(
    pauses.map(({ asked_by, ...pause }) => [pause.id, { pause: decodePause(pause), askedBy: asked_by }]),
  );
  return reviewers.flatMap((reviewer) => {
    const found = byId.get(reviewer.pause_id);
    return found ? [{ ...found, reviewer }] : [];
  });
}

export interface CastVote {
  pause_id: string;
  title: string;
  /** The email of the developer account that asked. */
  asked_by: string;
  created_at: string;
  choice: string;
  text: string | null;
  voted_at: string;
  status: PauseStatus;
  response_choice: string | null;
}

/** This reviewer's votes on live pauses, newest first, with the pause's title, asker and outcome. */
export const votesOfReviewer = (store: Store, input: { email: string; limit: number }): Promise<CastVote[]> =>
  store.db
    .selectFrom('reviewers')
    .innerJoin('pauses', 'pauses.id', 'reviewers.pause_id')
    .innerJoin('developers', 'developers.id', 'pauses.developer_id')
    .select([
      'reviewers.pause_id',
      'pauses.title',
      'developers.email as asked_by',
      'pauses.created_at',
      'reviewers.vote_choice as choice',
      'reviewers.vote_text as text',
      'reviewers.voted_at',
      'pauses.status',
      'pauses.response_choice',
    ])
    .where('reviewers.email', '=', input.email)
    .where('reviewers.voted_at', 'is not', null)
    .where('pauses.mode', '=', 'live')
    .orderBy('reviewers.voted_at', 'desc')
    .orderBy('reviewers.id', 'desc')
    .limit(input.limit)
    .execute() as Promise<CastVote[]>;

/** The reviewer row of this address on this live pause, if it names them. */
export const reviewerByEmail = (store: Store, input: { pauseId: string; email: string }) =>
  store.db
    .selectFrom('reviewers')
    .innerJoin('pauses', 'pauses.id', 'reviewers.pause_id')
    .select(['reviewers.id', 'reviewers.pause_id'])
    .where('reviewers.email', '=', input.email)
    .where('reviewers.pause_id', '=', input.pauseId)
    .where('pauses.mode', '=', 'live')
    .executeTakeFirst();
