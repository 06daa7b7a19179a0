import { type Kysely, sql } from 'kysely';
import { looksLikePauseId } from '../domain/ids.js';
import type { Pause, PauseStatus } from '../domain/pause.js';
import { titleHasWords } from '../domain/search.js';
import { ApiError } from '../errors.js';
import { decodePause } from './decode.js';
import type { Owner } from './pauses.js';
import type { Database, PausesTable } from './schema.js';
import type { Store } from './store.js';

// Title search over an owner's pauses, newest first, through the index each
// engine has for words (migration 0012): FTS5 on SQLite, GIN on PostgreSQL.
// Every word must start a word of the title. Pages follow an opaque cursor:
// the FTS row's position on SQLite, the pause id on PostgreSQL. On SQLite the
// worker puts new titles into the index (indexNewTitles), so a pause can be
// found a moment after it is created.

export interface PauseSearch {
  /** From searchWords(): letters and digits only, at least one. */
  words: string[];
  status?: PauseStatus | undefined;
  limit: number;
  /** The `next` of the previous page. */
  cursor?: string | undefined;
  /** PostgreSQL: how long the search's statements may run in all (statement_timeout). */
  timeoutMs: number;
}

export interface SearchPage {
  rows: Pause[];
  /** The cursor of the next page, when there is one. */
  next?: string | undefined;
}

export function searchPauses(store: Store, owner: Owner, search: PauseSearch): Promise<SearchPage> {
  if (search.words.length === 0) throw new Error('searchPauses needs at least one word');
  return store.dialect === 'sqlite' ? searchSqlite(store, owner, search) : searchPostgres(store, owner, search);
}

/** The owner as the one word the FTS table stores for it (see the migration). */
const ownerWord = (owner: Owner) => `${owner.developerId.replaceAll('_', '')}${owner.mode}`;

/**
 * SQLite: puts the titles of up to `batch` pauses not yet in the text index
 * into it, oldest first, and returns how many (0 on PostgreSQL, whose index
 * PostgreSQL keeps). Pauses are never deleted and their titles never change,
 * so new rows are all there is to index, and a pause's rowid only grows
 * (SQLite gives a new row the highest rowid yet plus one), unless a VACUUM
 * renumbers them: then the index is built again from the start.
 */
export async function indexNewTitles(store: Store, batch: number): Promise<number> {
  if (store.dialect !== 'sqlite') return 0;
  const progress = async (db: Kysely<Database>) =>
    (await sql<Progress>`select last_rowid, last_id from pause_titles_progress`.execute(db)).rows[0]!;
  // A read first: most ticks find nothing, and need no write lock for it.
  const seen = await progress(store.db);
  const { rows: newer } = await sql`select 1 from pauses where rowid > ${seen.last_rowid} limit 1`.execute(store.db);
  if (newer.length === 0 && (await isStillThere(store.db, seen))) return 0;

  return store.write(async (trx) => {
    const current = await progress(trx);
    let after = current.last_rowid;
    if (!(await isStillThere(trx, current))) {
      await sql`insert into pause_title_words (pause_title_words) values ('delete-all')`.execute(trx);
      after = 0;
    }
    const { rows } = await sql<TitleRow>`
      select rowid, id, developer_id, mode, title from pauses
      where rowid > ${after} order by rowid limit ${batch}`.execute(trx);
    const last = rows[rows.length - 1];
    if (!last) return 0;
    const values = rows.map(
      (row) => sql`(${ownerWord({ developerId: row.developer_id, mode: row.mode })}, ${row.title}, ${row.id})`,
    );
    await sql`insert into pause_title_words (owner, title, pause_id) values ${sql.join(values)}`.execute(trx);
    await sql`update pause_titles_progress set last_rowid = ${last.rowid}, last_id = ${last.id}`.execute(trx);
    return rows.length;
  });
}

interface Progress {
  last_rowid: number;
  last_id: string | null;
}

type TitleRow = Pick<PausesTable, 'id' | 'developer_id' | 'mode' | 'title'> & { rowid: number };

/** Whether the last pause indexed still has the rowid it had then (a VACUUM may renumber them). */
async function isStillThere(db: Kysely<Database>, progress: Progress): Promise<boolean> {
  if (progress.last_rowid === 0) return true;
  const { rows } = await sql<{ id: string }>`select id from pauses where rowid = ${progress.last_rowid}`.execute(db);
  return rows[0]?.id === progress.last_id;
}

/**
 * The longest prefix SQLite's text index keeps an index of its own for
 * (migration 0014: prefix='2 3 4'). A word of 2 to 4 characters is then one
 * list of rows to read, which FTS5 steps through alongside the owner word's,
 * skipping to the owner's rows; a longer prefix would make FTS5 first merge
 * the rows of every word in the whole index that starts with it (half a
 * second with titles made for it). So the index is asked for a longer word's
 * first INDEXED_PREFIX characters, and the titles of the matches are checked
 * for the whole word here.
 */
export const INDEXED_PREFIX = 4;

/**
 * With a status, SQLite looks at this many of the newest index matches per
 * page at most: the status is in the pauses table, not in the text index, and
 * a common word with a rare status would otherwise read every match. A page
 * may then hold fewer than `limit` pauses, and its cursor goes on from the
 * last match looked at.
 */
export const MATCHES_PER_PAGE_WITH_STATUS = 1000;
/**
 * The same with a word longer than INDEXED_PREFIX, whose whole word is only
 * in the title: fewer, as each title is read and its words checked here.
 */
export const MATCHES_PER_PAGE_WITH_LONG_WORDS = 250;

async function searchSqlite(store: Store, owner: Owner, search: PauseSearch): Promise<SearchPage> {
  // Words are letters and digits only, so quoting them is all FTS5 needs.
  const prefixes = search.words.map((word) => [...word].slice(0, INDEXED_PREFIX).join(''));
  const title = prefixes.map((prefix) => `"${prefix}"*`).join(' AND ');
  const match = `owner : "${ownerWord(owner)}" AND title : (${title})`;
  const cut = search.words.some((word, i) => word !== prefixes[i]);
  const lookAt = cut
    ? MATCHES_PER_PAGE_WITH_LONG_WORDS
    : search.status
      ? MATCHES_PER_PAGE_WITH_STATUS
      : search.limit + 1;
  const before = search.cursor && /^[1-9][0-9]{0,17}$/.test(search.cursor) ? Number(search.cursor) : undefined;
  const { rows: matches } = await sql<{ position: number; pause_id: string }>`
    select rowid as position, pause_id from pause_title_words
    where pause_title_words match ${match} ${before ? sql`and rowid < ${before}` : sql``}
    order by rowid desc limit ${lookAt}`.execute(store.db);
  if (matches.length === 0) return { rows: [] };

  // The matches that are the owner's (the owner word picked them; checked
  // again all the same), of the status, with the whole words, newest first:
  // only their ids and titles, as there may be a thousand.
  let query = store.db
    .selectFrom('pauses')
    .select(['id', 'title'])
    .where(
      'id',
      'in',
      matches.map((m) => m.pause_id),
    )
    .where('developer_id', '=', owner.developerId)
    .where('mode', '=', owner.mode);
  if (search.status) query = query.where('status', '=', search.status);
  const positions = new Map(matches.map((m) => [m.pause_id, m.position]));
  const found = (await query.execute())
    .filter((row) => !cut || titleHasWords(row.title, search.words))
    .sort((a, b) => positions.get(b.id)! - positions.get(a.id)!);

  const onPage = found.slice(0, search.limit).map((row) => row.id);
  const rows =
    onPage.length === 0
      ? []
      : (await store.db.selectFrom('pauses').selectAll().where('id', 'in', onPage).execute()).sort(
          (a, b) => positions.get(b.id)! - positions.get(a.id)!,
        );
  if (found.length > search.limit)
    return { rows: rows.map(decodePause), next: String(positions.get(onPage[onPage.length - 1]!)) };
  // Every match looked at is on this page; more may follow the last one.
  const lookedAtAll = lookAt > search.limit + 1 && matches.length === lookAt;
  return { rows: rows.map(decodePause), next: lookedAtAll ? String(matches[matches.length - 1]!.position) : undefined };
}

/**
 * PostgreSQL cannot tell well how many titles a prefix matches, and when it
 * guesses "many" it walks the owner's pauses newest first, computing each
 * title's words, until it has a page: quick for a common word, a full walk
 * (over a second with a million pauses) for a word in no title. So a search
 * first looks among the owner's newest RECENT_ROWS pauses only, which a
 * common word fills a page from; when that falls short, it takes every
 * match from the GIN index (materialized, so the planner cannot walk instead)
 * and sorts those, which is quick when matches are few.
 */
export const RECENT_ROWS = 5000;

async function searchPostgres(store: Store, owner: Owner, search: PauseSearch): Promise<SearchPage> {
  const query = search.words.map((word) => `'${word}':*`).join(' & ');
  const cursor = looksLikePauseId(search.cursor) ? search.cursor : undefined;
  const ofOwner = sql`developer_id = ${owner.developerId} and mode = ${owner.mode}
    ${cursor ? sql`and id < ${cursor}` : sql``} ${search.status ? sql`and status = ${search.status}` : sql``}`;
  const matches = sql`to_tsvector('simple', title) @@ to_tsquery('simple', ${query})`;
  const take = search.limit + 1;

  const rows = await withinTimeout(store, search.timeoutMs, async (trx) => {
    const { rows: recent } = await sql<PausesTable>`
      select * from (select * from pauses where ${ofOwner} order by id desc limit ${RECENT_ROWS}) as recent
      where ${matches} order by id desc limit ${take}`.execute(trx);
    if (recent.length === take) return recent;
    const { rows: all } = await sql<PausesTable>`
      with found as materialized (select id from pauses where ${ofOwner} and ${matches})
      select pauses.* from pauses join found using (id) order by pauses.id desc limit ${take}`.execute(trx);
    return all;
  });
  const page = rows.slice(0, search.limit);
  return { rows: page.map(decodePause), next: rows.length > search.limit ? page[page.length - 1]?.id : undefined };
}

/**
 * Runs a PostgreSQL search in a transaction of its own whose statements may
 * take `timeoutMs` each (SET LOCAL statement_timeout, so the pooled connection
 * goes back as it was); one that takes longer is cancelled by PostgreSQL and
 * answered with a 503 that says so, its connection free again at once.
 */
async function withinTimeout<T>(
  store: Store,
  timeoutMs: number,
  run: (trx: Kysely<Database>) => Promise<T>,
): Promise<T> {
  try {
    return await store.transaction(async (trx) => {
      await sql`select set_config('statement_timeout', ${String(timeoutMs)}, true)`.execute(trx);
      return run(trx);
    });
  } catch (error) {
    // 57014: query_canceled, which is what statement_timeout raises.
    if ((error as { code?: unknown }).code !== '57014') throw error;
    throw new ApiError(
      'search_timeout',
      `The search took longer than the ${timeoutMs} ms a search may run; try longer or more words.`,
      { rule: 'search_timeout' },
    );
  }
}
