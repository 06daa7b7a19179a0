import { type Kysely, sql } from 'kysely';
import { isSqlite } from './0012_pause_search.js';

// SQLite's text index of titles (0012) again, as pause_title_words, with
// indexes of the 2, 3 and 4 character prefixes of every word: a search then
// reads one list of rows per word instead of merging those of every word in
// the index that starts with it (see INDEXED_PREFIX in store/pause-search.ts).
// FTS5 cannot add them to a table, so the new table starts empty and the
// worker fills it again from the first pause (pause_titles_progress back at
// the start); until then a search finds only the pauses indexed so far.
// It has a new name because SQLite (3.53) leaves pause_titles_content, a
// shadow table of the old one, behind when it is dropped, and will not drop it
// (better-sqlite3 runs in defensive mode): it is emptied first, and stays,
// empty. That also makes this migration one way on SQLite.
// PostgreSQL: nothing to do.

export async function up(db: Kysely<unknown>): Promise<void> {
  if (!isSqlite(db)) return;
  await sql`insert into pause_titles (pause_titles) values ('delete-all')`.execute(db);
  await sql`drop table pause_titles`.execute(db);
  await sql`create virtual table pause_title_words using fts5(
    owner, title, pause_id unindexed,
    content = '', contentless_delete = 1, contentless_unindexed = 1,
    tokenize = 'unicode61 remove_diacritics 2', prefix = '2 3 4'
  )`.execute(db);
  await sql`update pause_titles_progress set last_rowid = 0, last_id = null`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (isSqlite(db)) throw new Error('0014_search_prefixes cannot be undone on SQLite (see the migration)');
}
