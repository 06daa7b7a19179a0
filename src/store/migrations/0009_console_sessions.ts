import type { Kysely } from 'kysely';

// The console's sign-in sessions, in the database so any instance serves any
// request. Only the SHA-256 of the cookie's token is kept. A session ends 12 h
// after it was last used (expires_at moves on as it is used) or at sign-out.
// Separate from `sessions` (the API's one-hour Bearer sessions): a console
// cookie is never accepted as a Bearer token, nor the reverse.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('console_sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('developer_id', 'text', (c) => c.notNull().references('developers.id').onDelete('cascade'))
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_used_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute();
  // Sign-in clears the developer's expired sessions.
  await db.schema
    .createIndex('console_sessions_developer')
    .on('console_sessions')
    .columns(['developer_id', 'expires_at'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('console_sessions').execute();
}
