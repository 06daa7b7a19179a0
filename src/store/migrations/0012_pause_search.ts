import { type Kysely, SqliteAdapter, sql } from 'kysely';

// Searching a developer's pauses by title (the console's search box) with an
// index made for words, on each engine:
// - SQLite: an FTS5 table filled by a trigger as pauses are created. It keeps
//   no copy of the title, only the words, the pause's id and an owner token
//   (developer id and mode as one word), so a search for one owner's pauses
//   walks that owner's words only. Its rowid is its own and grows with each
//   pause created, which is the order the search returns (newest first).
//   Titles never change and pauses are never deleted, so insert is the only
//   trigger.
// - PostgreSQL: a GIN index on the title's words (to_tsvector('simple', …)).

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
  await sql`create trigger pause_titles_on_create after insert on pauses begin
    insert into pause_titles (owner, title, pause_id)
    values (replace(new.developer_id, '_', '') || new.mode, new.title, new.id);
  end`.execute(db);
  // Pauses made before this migration.
  await sql`insert into pause_titles (owner, title, pause_id)
    select replace(developer_id, '_', '') || mode, title, id from pauses order by id`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (!isSqlite(db)) {
    await sql`drop index pauses_title_words`.execute(db);
    return;
  }
  await sql`drop trigger pause_titles_on_create`.execute(db);
  await sql`drop table pause_titles`.execute(db);
}
