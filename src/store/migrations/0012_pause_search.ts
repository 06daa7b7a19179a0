import { type Kysely, SqliteAdapter, sql } from 'kysely';

// Searching a developer's pauses by title (the console's search box) with an
// index made for words, on each engine:
// - SQLite: an FTS5 table that keeps no copy of the title, only its words,
//   the pause's id and an owner word (developer id and mode as one word), so
//   a search for one owner's pauses walks that owner's words only. It is
//   filled by the worker in batches (see indexNewTitles in
//   store/pause-search.ts), not by a trigger on every create: a batch of a
//   thousand costs a tenth per title of what one create's own FTS write did.
//   pause_titles_progress records how far it has got. Its rowids grow with
//   each title indexed, which is the order searches return (newest first).
// - PostgreSQL: a GIN index on the title's words (to_tsvector('simple', …)),
//   kept by PostgreSQL itself as pauses are created.

export const isSqlite = (db: Kysely<unknown>) => db.getExecutor().adapter instanceof SqliteAdapter;

export async function up(db: Kysely<unknown>): Promise<void> {
  if (!isSqlite(db)) {
    await sql`create index pauses_title_words on pauses using gin (to_tsvector('simple', title))`.execute(db);
    return;
  }
  await sql`create virtual table pause_titles using fts5(
    owner, title, pause_id unindexed,
    content = '', contentless_delete = 1, contentless_unindexed = 1,
    tokenize = 'unicode61 remove_diacritics 2'
  )`.execute(db);
  // The last pause indexed, by rowid and id (the id tells whether a VACUUM
  // has renumbered the rowids since, which would mean starting over).
  await sql`create table pause_titles_progress (
    id integer primary key check (id = 1),
    last_rowid integer not null,
    last_id text
  )`.execute(db);
  await sql`insert into pause_titles_progress (id, last_rowid, last_id) values (1, 0, null)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (!isSqlite(db)) {
    await sql`drop index pauses_title_words`.execute(db);
    return;
  }
  await sql`drop table pause_titles_progress`.execute(db);
  await sql`drop table pause_titles`.execute(db);
}
