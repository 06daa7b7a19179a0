import { type Kysely, sql } from 'kysely';

// Reviewers: the named people who decide a pause, their votes, and the
// follow-ups (reminders, escalation) the worker finds by index, like expiries.

export async function up(db: Kysely<unknown>): Promise<void> {
  // What the developer asked for; all null on a pause without reviewers.
  await db.schema.alterTable('pauses').addColumn('quorum', 'integer').execute();
  await db.schema.alterTable('pauses').addColumn('veto', 'text').execute();
  await db.schema.alterTable('pauses').addColumn('remind_every', 'integer').execute();
  await db.schema.alterTable('pauses').addColumn('remind_max', 'integer').execute();
  await db.schema.alterTable('pauses').addColumn('escalate', 'text').execute();
  // The deciding vote's reviewer.
  await db.schema.alterTable('pauses').addColumn('responded_by', 'text').execute();
  // When the next reminder and the escalation fall due; null once done or decided.
  await db.schema.alterTable('pauses').addColumn('remind_at', 'text').execute();
  await db.schema.alterTable('pauses').addColumn('reminders_sent', 'integer').execute();
  await db.schema.alterTable('pauses').addColumn('escalate_at', 'text').execute();
  await db.schema.alterTable('pauses').addColumn('escalated_at', 'text').execute();
  for (const column of ['remind_at', 'escalate_at']) {
    await db.schema
      .createIndex(`pauses_due_${column}`)
      .on('pauses')
      .column(column)
      .where(sql.ref(column), 'is not', null)
      .execute();
  }

  // One row per reviewer; the vote columns are written once (voted_at is null until then).
  await db.schema
    .createTable('reviewers')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('pause_id', 'text', (c) => c.notNull().references('pauses.id').onDelete('cascade'))
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('name', 'text')
    .addColumn('added_by', 'text', (c) => c.notNull())
    .addColumn('added_at', 'text', (c) => c.notNull())
    .addColumn('vote_choice', 'text')
    .addColumn('vote_text', 'text')
    .addColumn('voted_at', 'text')
    .execute();
  await db.schema.createIndex('reviewers_pause').on('reviewers').columns(['pause_id', 'position']).execute();
  // Lower-cased at insert, so this holds case-insensitively.
  await db.schema
    .createIndex('reviewers_one_per_email')
    .on('reviewers')
    .columns(['pause_id', 'email'])
    .unique()
    .execute();
  await db.schema.createIndex('reviewers_email').on('reviewers').columns(['email', 'pause_id']).execute();

  // Which reviewer a notification is for, and why it was sent.
  await db.schema.alterTable('notifications').addColumn('reviewer_id', 'text').execute();
  await db.schema
    .alterTable('notifications')
    .addColumn('kind', 'text', (c) => c.notNull().defaultTo('question'))
    .execute();

  // A pause now has many pause.voted events; still exactly one terminal event.
  await db.schema.dropIndex('events_one_per_pause').execute();
  await db.schema
    .createIndex('events_one_outcome_per_pause')
    .on('events')
    .column('pause_id')
    .unique()
    .where(sql.ref('type'), '<>', 'pause.voted')
    .execute();
  await db.schema.createIndex('events_pause').on('events').columns(['pause_id', 'id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('events_pause').execute();
  await db.schema.dropIndex('events_one_outcome_per_pause').execute();
  await db
    .deleteFrom('events' as never)
    .where(sql.ref('type'), '=', 'pause.voted')
    .execute();
  await db.schema.createIndex('events_one_per_pause').on('events').column('pause_id').unique().execute();
  await db.schema.alterTable('notifications').dropColumn('kind').execute();
  await db.schema.alterTable('notifications').dropColumn('reviewer_id').execute();
  await db.schema.dropTable('reviewers').execute();
  for (const column of ['remind_at', 'escalate_at']) await db.schema.dropIndex(`pauses_due_${column}`).execute();
  for (const column of [
    'escalated_at',
    'escalate_at',
    'reminders_sent',
    'remind_at',
    'responded_by',
    'escalate',
    'remind_max',
    'remind_every',
    'veto',
    'quorum',
  ]) {
    await db.schema.alterTable('pauses').dropColumn(column).execute();
  }
}
