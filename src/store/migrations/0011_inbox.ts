import type { Kysely } from 'kysely';

// The reviewers' inbox (/inbox): single-use sign-in links (valid 15 min) and
// the sessions they start (12 h idle). A reviewer is their email address, so
// neither table refers to a pause or a developer. Only the SHA-256 of a link's
// or a cookie's token is kept.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('inbox_links')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('used_at', 'text')
    .execute();
  // A new link clears the address's expired ones.
  await db.schema.createIndex('inbox_links_email').on('inbox_links').columns(['email', 'expires_at']).execute();
  await db.schema
    .createTable('inbox_sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_used_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('inbox_sessions_email').on('inbox_sessions').columns(['email', 'expires_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('inbox_sessions').execute();
  await db.schema.dropTable('inbox_links').execute();
}
