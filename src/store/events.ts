import type { Kysely } from 'kysely';
import type { StoredEvent } from '../domain/events.js';
import type { Owner } from './pauses.js';
import type { Database, EventsTable } from './schema.js';
import type { Store } from './store.js';

// Reading the events of pauses. They are written with each transition, in
// transitions.ts.

/** A page of the owner's events, oldest first, from `since` (inclusive) if given. */
export async function listEvents(
  store: Store,
  owner: Owner,
  input: { since?: string; limit: number },
  trx: Kysely<Database> = store.db,
): Promise<{ rows: StoredEvent[]; hasMore: boolean }> {
  let query = trx
    .selectFrom('events')
    .select(['id', 'type', 'pause_id', 'created_at', 'payload'])
    .where('developer_id', '=', owner.developerId)
    .where('mode', '=', owner.mode);
  if (input.since) query = query.where('created_at', '>=', input.since);
  const rows = await query
    .orderBy('created_at')
    .orderBy('id')
    .limit(input.limit + 1)
    .execute();
  const events = rows.slice(0, input.limit).map((row) => ({
    id: row.id,
    type: row.type,
    pauseId: row.pause_id,
    createdAt: row.created_at,
    payload: JSON.parse(row.payload) as Record<string, unknown>,
  }));
  return { rows: events, hasMore: rows.length > input.limit };
}

/** The event that ended a pause, if it has ended. */
export const outcomeEventOf = (
  store: Store,
  pauseId: string,
  trx: Kysely<Database> = store.db,
): Promise<Pick<EventsTable, 'type' | 'created_at'> | undefined> =>
  trx
    .selectFrom('events')
    .select(['type', 'created_at'])
    .where('pause_id', '=', pauseId)
    .where('type', '<>', 'pause.voted')
    .executeTakeFirst();
