import { type Kysely, sql } from 'kysely';

// The inbox finds a reviewer's pauses by their email in any case: a pause may
// name "Ann@Example.com" while she signs in as "ann@example.com". Reviewer
// emails are stored as the developer wrote them, so the inbox reads them by
// lower(email), which this index serves (it replaces reviewers_email, which
// only the inbox read).

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('reviewers_email').execute();
  await db.schema
    .createIndex('reviewers_email_any_case')
    .on('reviewers')
    .expression(sql`lower(${sql.ref('email')}), ${sql.ref('pause_id')}`)
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('reviewers_email_any_case').execute();
  await db.schema.createIndex('reviewers_email').on('reviewers').columns(['email', 'pause_id']).execute();
}
