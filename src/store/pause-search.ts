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

async function searchSqlite(store: Store, owner: Owner, search: PauseSearch): Promise<SearchPage> {
  // Words are letters and digits only, so quoting them is all FTS5 needs.
  const title = search.words.map((word) => `"${word}"*`).join(' AND ');
  const match = `owner : "${ownerWord(owner)}" AND title : (${title})`;
  const before = search.cursor && /^[1-9][0-9]{0,17}$/.test(search.cursor) ? search.cursor : undefined;
  const { rows } = await sql<PausesTable & { search_position: number }>`
    select pauses.*, pause_titles.rowid as search_position
    from pause_titles join pauses on pauses.id = pause_titles.pause_id
    where pause_titles match ${match}
      ${before ? sql`and pause_titles.rowid < ${Number(before)}` : sql``}
      ${search.status ? sql`and pauses.status = ${search.status}` : sql``}
    order by pause_titles.rowid desc
    limit ${search.limit + 1}`.execute(store.db);
  const page = rows.slice(0, search.limit);
  const last = page[page.length - 1];
  return {
    rows: page.map(({ search_position: _, ...row }) => row),
    next: rows.length > search.limit && last ? String(last.search_position) : undefined,
  };
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
