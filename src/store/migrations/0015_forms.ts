import type { Kysely } from 'kysely';

// Typed answers (DESIGN.md): a pause's form, the options that need a written
// reason, how options are styled; an answer's values and whether they were
// edited; each reviewer's own values. All JSON as text, all null on a pause
// without them (and on every pause made before), so nothing is rewritten.

const PAUSE_COLUMNS = [
  ['form_schema', 'text'],
  ['form_values', 'text'],
  ['form_on', 'text'],
  ['require_text', 'text'],
  ['options_style', 'text'],
  ['response_values', 'text'],
  ['response_edited', 'integer'],
] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const [column, type] of PAUSE_COLUMNS) await db.schema.alterTable('pauses').addColumn(column, type).execute();
  await db.schema.alterTable('reviewers').addColumn('vote_values', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('reviewers').dropColumn('vote_values').execute();
  for (const [column] of [...PAUSE_COLUMNS].reverse())
    await db.schema.alterTable('pauses').dropColumn(column).execute();
}
