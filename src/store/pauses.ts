import type { Kysely } from 'kysely';
import type { Mode } from '../domain/keys.js';
import { compiledInsert } from './compiled-insert.js';
import type { Database, PauseStatus, PausesTable } from './schema.js';

// Reading pauses, and the insert of a new one. Every change of status is in
// transitions.ts.

export interface Owner {
  developerId: string;
  mode: Mode;
}

export const getPause = (db: Kysely<Database>, id: string) =>
  db.selectFrom('pauses').selectAll().where('id', '=', id).executeTakeFirst();

export const getOwnedPause = (db: Kysely<Database>, owner: Owner, id: string) =>
  db
    .selectFrom('pauses')
    .selectAll()
    .where('id', '=', id)
    .where('developer_id', '=', owner.developerId)
    .where('mode', '=', owner.mode)
    .executeTakeFirst();

/** A page of the owner's pauses, newest first, optionally of one status. */
export async function listPauses(
  db: Kysely<Database>,
  owner: Owner,
  input: { status?: PauseStatus; limit: number; startingAfter?: string; now: string },
): Promise<{ rows: PausesTable[]; hasMore: boolean }> {
  let query = db
    .selectFrom('pauses')
    .selectAll()
    .where('developer_id', '=', owner.developerId)
    .where('mode', '=', owner.mode);
  if (input.startingAfter) query = query.where('id', '<', input.startingAfter);
  if (input.status) query = query.where('status', '=', input.status);
  const rows = await query
    .orderBy('id', 'desc')
    .limit(input.limit + 1)
    .execute();
  return { rows: rows.slice(0, input.limit), hasMore: rows.length > input.limit };
}

/** A new pause: the hottest write of all, so its SQL is compiled once. */
export const insertPause = compiledInsert('pauses', {
  id: true,
  developer_id: true,
  mode: true,
  status: true,
  title: true,
  body: true,
  options: true,
  allow_text: true,
  expires_at: true,
  timeout_default: true,
  metadata: true,
  notify: true,
  response_choice: true,
  response_text: true,
  response_at: true,
  created_at: true,
  updated_at: true,
});
