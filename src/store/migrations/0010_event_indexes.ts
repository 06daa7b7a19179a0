import { type Kysely, sql } from 'kysely';

// Fewer indexes to write with every event. Each event went into five B-trees:
// its key, two by owner, and two by pause. Now it goes into three:
// - `events_owner` (developer, mode, id) had no reader: GET /v1/events pages
//   by `events_owner_time`.
// - The two by pause become one: `events_by_pause` is unique on the pause and
//   a second part that is the event's own id for a `pause.voted` and '' for
//   everything else, so a pause still has at most one outcome event, and the
//   pause leads, so it finds all of a pause's events.

const secondPart = sql`(case when ${sql.ref('type')} = 'pause.voted' then ${sql.ref('id')} else '' end)`;

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('events_owner').execute();
  await db.schema.dropIndex('events_pause').execute();
  await db.schema.dropIndex('events_one_outcome_per_pause').execute();
  await db.schema
    .createIndex('events_by_pause')
    .on('events')
    .unique()
    .expression(sql`${sql.ref('pause_id')}, ${secondPart}`)
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('events_by_pause').execute();
  await db.schema
    .createIndex('events_one_outcome_per_pause')
    .on('events')
    .column('pause_id')
    .unique()
    .where(sql.ref('type'), '<>', 'pause.voted')
    .execute();
  await db.schema.createIndex('events_pause').on('events').columns(['pause_id', 'id']).execute();
  await db.schema.createIndex('events_owner').on('events').columns(['developer_id', 'mode', 'id']).execute();
}
