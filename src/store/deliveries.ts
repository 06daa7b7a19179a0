import type { Kysely, Transaction } from 'kysely';
import { newId } from '../domain/ids.js';
import type { Claim } from './outbox.js';
import type { Database, DeliveriesTable, EventsTable } from './schema.js';

// Webhook deliveries: written with their event (fan-out), claimed by workers,
// settled after each attempt. The database is the queue.

const INSERT_SLICE = 1000;

/** Writes one pending delivery per subscribed webhook of each event's owner and mode. */
export async function fanOut(trx: Transaction<Database>, events: EventsTable[]): Promise<number> {
  if (events.length === 0) return 0;
  const developers = [...new Set(events.map((event) => event.developer_id))];
  const webhooks = await trx
    .selectFrom('webhooks')
    .select(['id', 'developer_id', 'mode', 'events'])
    .where('developer_id', 'in', developers)
    .execute();
  const rows: DeliveriesTable[] = [];
  for (const event of events) {
    for (const webhook of webhooks) {
      if (webhook.developer_id !== event.developer_id || webhook.mode !== event.mode) continue;
      if (!(JSON.parse(webhook.events) as string[]).includes(event.type)) continue;
      rows.push({
        id: newId('dlv'),
        webhook_id: webhook.id,
        event_id: event.id,
        developer_id: event.developer_id,
        status: 'pending',
        attempts: 0,
        next_attempt_at: event.created_at,
        last_status_code: null,
        last_error: null,
        created_at: event.created_at,
        updated_at: event.created_at,
        completed_at: null,
      });
    }
  }
  // In slices, to stay under SQLite's limit on bound parameters per statement.
  for (let i = 0; i < rows.length; i += INSERT_SLICE) {
    await trx
      .insertInto('deliveries')
      .values(rows.slice(i, i + INSERT_SLICE))
      .execute();
  }
  return rows.length;
}

export interface DeliveryToSend extends Claim {
  webhook_id: string;
  url: string;
  secret_sealed: string;
  type: string;
  payload: string;
}

/** What the worker needs to send claimed deliveries. */
export async function loadDeliveries(db: Kysely<Database>, claims: Claim[]): Promise<DeliveryToSend[]> {
  if (claims.length === 0) return [];
  const rows = await db
    .selectFrom('deliveries')
    .innerJoin('webhooks', 'webhooks.id', 'deliveries.webhook_id')
    .innerJoin('events', 'events.id', 'deliveries.event_id')
    .select([
      'deliveries.id',
      'deliveries.webhook_id',
      'webhooks.url',
      'webhooks.secret_sealed',
      'events.type',
      'events.payload',
    ])
    .where(
      'deliveries.id',
      'in',
      claims.map((claim) => claim.id),
    )
    .execute();
  const attempts = new Map(claims.map((claim) => [claim.id, claim.attempts]));
  return rows.map((row) => ({ ...row, attempts: attempts.get(row.id) ?? 1 }));
}
