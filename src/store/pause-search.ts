import { sql } from 'kysely';
import type { PauseStatus } from '../domain/pause.js';
import type { Owner } from './pauses.js';
import type { PausesTable } from './schema.js';
import type { Store } from './store.js';

// Title search over an owner's pauses, newest first, through the index each
// engine has for words (migration 0012): FTS5 on SQLite, GIN on PostgreSQL.
// Every word must start a word of the title. Pages follow an opaque cursor:
// the FTS row's position on SQLite, the pause id on PostgreSQL.

export interface PauseSearch {
  /** From searchWords(): letters and digits only, at least one. */
  words: string[];
  status?: PauseStatus | undefined;
  limit: number;
  /** The `next` of the previous page. */
  cursor?: string | undefined;
}

export interface SearchPage {
  rows: PausesTable[];
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
 * With a status as well, SQLite looks at this many of the newest title
 * matches per page at most: the status is in the pauses table, not in the
 * text index, and a common word with a rare status would otherwise read
 * every match. A page may then hold fewer than `limit` pauses, and its
 * cursor goes on from the last match looked at.
 */
export const MATCHES_PER_PAGE_WITH_STATUS = 1000;

async function searchSqlite(store: Store, owner: Owner, search: PauseSearch): Promise<SearchPage> {
  // Words are letters and digits only, so quoting them is all FTS5 needs.
  const title = search.words.map((word) => `"${word}"*`).join(' AND ');
  const match = `owner : "${ownerWord(owner)}" AND title : (${title})`;
  const before = search.cursor && /^[1-9][0-9]{0,17}$/.test(search.cursor) ? Number(search.cursor) : undefined;
  const newestMatches = (limit: number) =>
    sql<{ position: number; pause_id: string }>`
      select rowid as position, pause_id from pause_titles
      where pause_titles match ${match} ${before ? sql`and rowid < ${before}` : sql``}
      order by rowid desc limit ${limit}`.execute(store.db);

  const { rows: matches } = await newestMatches(search.status ? MATCHES_PER_PAGE_WITH_STATUS : search.limit + 1);
  if (matches.length === 0) return { rows: [] };
  let query = store.db
    .selectFrom('pauses')
    .selectAll()
    .where(
      'id',
      'in',
      matches.map((m) => m.pause_id),
    );
  if (search.status) query = query.where('status', '=', search.status);
  const positions = new Map(matches.map((m) => [m.pause_id, m.position]));
  const found = (await query.execute()).sort((a, b) => positions.get(b.id)! - positions.get(a.id)!);

  const page = found.slice(0, search.limit);
  if (found.length > search.limit) return { rows: page, next: String(positions.get(page[page.length - 1]!.id)) };
  // Every match looked at is on this page; more may follow the last one.
  const lookedAtAll = matches.length === MATCHES_PER_PAGE_WITH_STATUS;
  return { rows: page, next: search.status && lookedAtAll ? String(matches[matches.length - 1]!.position) : undefined };
}

async function searchPostgres(store: Store, owner: Owner, search: PauseSearch): Promise<SearchPage> {
  const query = search.words.map((word) => `'${word}':*`).join(' & ');
  let select = store.db
    .selectFrom('pauses')
    .selectAll()
    .where('developer_id', '=', owner.developerId)
    .where('mode', '=', owner.mode)
    .where(sql<boolean>`to_tsvector('simple', title) @@ to_tsquery('simple', ${query})`);
  if (search.cursor && /^pause_[0-9A-Za-z]{1,64}$/.test(search.cursor)) select = select.where('id', '<', search.cursor);
  if (search.status) select = select.where('status', '=', search.status);
  const rows = await select
    .orderBy('id', 'desc')
    .limit(search.limit + 1)
    .execute();
  const page = rows.slice(0, search.limit);
  return { rows: page, next: rows.length > search.limit ? page[page.length - 1]?.id : undefined };
}
