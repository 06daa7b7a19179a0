import type { Kysely } from 'kysely';

// The console shows a pause's webhook deliveries: its events are found by
// `events_by_pause`, and their deliveries by this index (deliveries had
// indexes by webhook and by due time only, so each event was a scan).

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('deliveries_by_event').on('deliveries').column('event_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('deliveries_by_event').execute();
}
