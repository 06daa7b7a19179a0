import { newId } from '../domain/ids.js';
import { issueConsoleToken } from '../domain/keys.js';
import type { ConsoleSessionsTable } from './schema.js';
import type { Store } from './store.js';

// The console's sign-in sessions (migration 0009). The token lives only in the
// browser's cookie; the database keeps its SHA-256.

export type ConsoleSession = Pick<ConsoleSessionsTable, 'id' | 'developer_id' | 'last_used_at' | 'expires_at'>;

/**
 * A new session for the developer; returns the cookie's token (shown only
 * now) and the session. The developer's expired sessions go at the same time.
 */
export async function createConsoleSession(
  store: Store,
  input: { developerId: string; now: string; expiresAt: string },
): Promise<{ token: string; session: ConsoleSession }> {
  const token = issueConsoleToken();
  const session = {
    id: newId('csess'),
    developer_id: input.developerId,
    last_used_at: input.now,
    expires_at: input.expiresAt,
  };
  await store.transaction(async (trx) => {
    await trx
      .deleteFrom('console_sessions')
      .where('developer_id', '=', input.developerId)
      .where('expires_at', '<=', input.now)
      .execute();
    await trx
      .insertInto('console_sessions')
      .values({ ...session, token_hash: token.hash, created_at: input.now })
      .execute();
  });
  return { token: token.plaintext, session };
}

/** The unexpired session whose token has this hash. */
export const findConsoleSession = (store: Store, tokenHash: string, now: string) =>
  store.db
    .selectFrom('console_sessions')
    .select(['id', 'developer_id', 'last_used_at', 'expires_at'])
    .where('token_hash', '=', tokenHash)
    .where('expires_at', '>', now)
    .executeTakeFirst() as Promise<ConsoleSession | undefined>;

/** The tables of sign-in sessions: the console's and the reviewers' inbox's, alike but for their owner column. */
export type SessionTable = 'console_sessions' | 'inbox_sessions';

/** Moves an unexpired session's idle expiry on. */
export async function extendSession(
  store: Store,
  table: SessionTable,
  input: { id: string; now: string; expiresAt: string },
): Promise<void> {
  await store.db
    .updateTable(table)
    .set({ last_used_at: input.now, expires_at: input.expiresAt })
    .where('id', '=', input.id)
    .where('expires_at', '>', input.now)
    .execute();
}

/** Ends a session, for every instance at once. */
export async function deleteSession(store: Store, table: SessionTable, id: string): Promise<void> {
  await store.db.deleteFrom(table).where('id', '=', id).execute();
}
