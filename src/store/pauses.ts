import type { Kysely } from 'kysely';
import type { Mode } from '../domain/keys.js';
import type { Pause, PauseReviewerFields, PauseStatus } from '../domain/pause.js';
import { ANSWER_RULE_COLUMNS, type AnswerRules, decodeAnswerRules, decodePause, encodePause } from './decode.js';
import { prepared } from './prepared.js';
import type { Database, PausesTable } from './schema.js';
import type { Store } from './store.js';

// Reading pauses, and the insert of a new one. Every change of status is in
// transitions.ts.

export interface Owner {
  developerId: string;
  mode: Mode;
}

const selectPause = prepared((db, input: { id: string }) =>
  db.selectFrom('pauses').selectAll().where('id', '=', input.id),
);

export async function getPause(store: Store, id: string, trx?: Kysely<Database>): Promise<Pause | undefined> {
  const [row] = await selectPause(store, { id }, trx);
  return row && decodePause(row);
}

const selectAnswerRules = prepared((db, input: { id: string }) =>
  db.selectFrom('pauses').select(ANSWER_RULE_COLUMNS).where('id', '=', input.id),
);

/** What an answer to the pause is checked against: a few of its columns, read before an answer with values. */
export async function getAnswerRules(store: Store, id: string): Promise<AnswerRules | undefined> {
  const [row] = await selectAnswerRules(store, { id });
  return row && decodeAnswerRules(row);
}

/**
 * The pause, if it is this owner's (developer and mode). Read by its id alone,
 * the primary key, and the owner compared here: with the owner in the WHERE
 * clause, PostgreSQL's planner may take the owner's status index and walk
 * every pause of a large developer (it did, 140 ms a read, on a table just
 * filled and not yet analysed).
 */
export async function getOwnedPause(
  store: Store,
  owner: Owner,
  id: string,
  trx?: Kysely<Database>,
): Promise<Pause | undefined> {
  const [row] = await selectPause(store, { id }, trx);
  return row && row.developer_id === owner.developerId && row.mode === owner.mode ? decodePause(row) : undefined;
}

/** A page of the owner's pauses, newest first, optionally of one status. */
export async function listPauses(
  store: Store,
  owner: Owner,
  input: { status?: PauseStatus; limit: number; startingAfter?: string; now: string },
  trx: Kysely<Database> = store.db,
): Promise<{ rows: Pause[]; hasMore: boolean }> {
  let query = trx
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
  return { rows: rows.slice(0, input.limit).map(decodePause), hasMore: rows.length > input.limit };
}

/** How many of the owner's pauses are stored as pending (pauses_owner_status answers it). */
export async function countPendingPauses(store: Store, owner: Owner): Promise<number> {
  const row = await store.db
    .selectFrom('pauses')
    .select((eb) => eb.fn.countAll<number | string>().as('count'))
    .where('developer_id', '=', owner.developerId)
    .where('mode', '=', owner.mode)
    .where('status', '=', 'pending')
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** The reviewer fields of a pause that has none; a new object (and veto array) each call, never shared. */
export const withoutReviewers = (): PauseReviewerFields => ({
  quorum: null,
  veto: [],
  remindEvery: null,
  remindMax: null,
  escalation: null,
  respondedBy: null,
  deliver: null,
  remindAt: null,
  remindersSent: null,
  escalateAt: null,
  escalatedAt: null,
});

/** The fields of a pause without a form, required reasons or styled options, and not yet answered. */
export const withoutTypedAnswers = (): Pick<
  Pause,
  'form' | 'requireText' | 'optionsStyle' | 'responseValues' | 'responseEdited'
> => ({ form: null, requireText: [], optionsStyle: {}, responseValues: null, responseEdited: null });

/** A new pause. */
export async function insertPause(store: Store, pause: Pause, trx?: Kysely<Database>): Promise<void> {
  const row = encodePause(pause);
  if (row.quorum === null) await insertPlainPause(store, row, trx);
  else await (trx ?? store.db).insertInto('pauses').values(row).execute();
}

/** A new pause without reviewers: the hottest write of all, so prepared once, with only the columns it sets. */
const insertPlainPause = prepared((db, row: PausesTable) =>
  db.insertInto('pauses').values({
    id: row.id,
    developer_id: row.developer_id,
    mode: row.mode,
    status: row.status,
    title: row.title,
    body: row.body,
    options: row.options,
    allow_text: row.allow_text,
    expires_at: row.expires_at,
    timeout_default: row.timeout_default,
    metadata: row.metadata,
    notify: row.notify,
    response_choice: row.response_choice,
    response_text: row.response_text,
    response_at: row.response_at,
    created_at: row.created_at,
    updated_at: row.updated_at,
    form_schema: row.form_schema,
    form_values: row.form_values,
    form_on: row.form_on,
    require_text: row.require_text,
    options_style: row.options_style,
  }),
);

/** Which of these pauses are stored as pending; a pause not found is not among them. */
export async function pendingAmong(store: Store, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await store.db
    .selectFrom('pauses')
    .select('id')
    .where('id', 'in', ids)
    .where('status', '=', 'pending')
    .execute();
  return new Set(rows.map((row) => row.id));
}
