import { type Kysely, sql, type Transaction } from 'kysely';
import { laterTime } from '../domain/clock.js';
import { newId } from '../domain/ids.js';
import { type Claim, type ClaimLoader, claimDue, requeuedFields } from './outbox.js';
import type { Owner } from './pauses.js';
import { prepared } from './prepared.js';
import type { Database, DeliveriesTable, DeliveryStatus, EventsTable } from './schema.js';
import type { Store } from './store.js';
import { announceWorkQueued } from './wake-ups.js';

// Webhook deliveries: written with their event (fan-out), claimed by workers,
// settled after each attempt. The database is the queue.

const INSERT_SLICE = 1000;

/** How many missed events recover reads and writes deliveries for at a time (under SQLite's bound parameters). */
const RECOVER_BATCH = 500;

/** The webhooks of one developer: an answer's, a cancel's or a vote's event has one owner. */
const webhooksOfDeveloper = prepared((db, input: { developerId: string }) =>
  db
    .selectFrom('webhooks')
    .select(['id', 'developer_id', 'mode', 'events'])
    .where('developer_id', '=', input.developerId)
    .where('disabled_at', 'is', null),
);

/** Writes one pending delivery per subscribed, active webhook of each event's owner and mode. */
export async function fanOut(store: Store, events: EventsTable[], trx: Transaction<Database>): Promise<number> {
  if (events.length === 0) return 0;
  const developers = [...new Set(events.map((event) => event.developer_id))];
  const webhooks =
    developers.length === 1
      ? await webhooksOfDeveloper(store, { developerId: developers[0]! }, trx)
      : await trx
          .selectFrom('webhooks')
          .select(['id', 'developer_id', 'mode', 'events'])
          .where('developer_id', 'in', developers)
          .where('disabled_at', 'is', null)
          .execute();
  const rows: DeliveriesTable[] = [];
  for (const event of events) {
    for (const webhook of webhooks) {
      if (webhook.developer_id !== event.developer_id || webhook.mode !== event.mode) continue;
      if (!(JSON.parse(webhook.events) as string[]).includes(event.type)) continue;
      rows.push(newDelivery(webhook.id, event));
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

const newDelivery = (
  webhookId: string,
  event: Pick<EventsTable, 'id' | 'developer_id' | 'created_at'>,
  due = event.created_at,
): DeliveriesTable => ({
  id: newId('dlv'),
  webhook_id: webhookId,
  event_id: event.id,
  developer_id: event.developer_id,
  status: 'pending',
  attempts: 0,
  next_attempt_at: due,
  last_status_code: null,
  last_error: null,
  created_at: event.created_at,
  updated_at: due,
  completed_at: null,
});

export interface DeliveryToSend extends Claim {
  webhook_id: string;
  url: string;
  secret_sealed: string;
  /** The secret before the last rotation, still signing until previous_secret_expires_at. */
  previous_secret_sealed: string | null;
  previous_secret_expires_at: string | null;
  disabled_at: string | null;
  /** When the webhook's failing streak began, as loaded; null while it is not failing. */
  failing_since: string | null;
  type: string;
  payload: string;
}

/** The deliveries' ClaimLoader: what the worker needs to send them. */
const deliveriesToSend: ClaimLoader<DeliveryToSend> = {
  selectClaimed: (claimed) => sql<DeliveryToSend>`
    with claimed as (${claimed})
    select claimed.id, claimed.attempts, claimed.webhook_id, webhooks.url, webhooks.secret_sealed,
      webhooks.previous_secret_sealed, webhooks.previous_secret_expires_at, webhooks.disabled_at,
      webhooks.failing_since, events.type, events.payload
    from claimed
    join webhooks on webhooks.id = claimed.webhook_id
    join events on events.id = claimed.event_id
    order by claimed.claim_rank, claimed.claim_due`,
  load: (store, claims) => loadDeliveries(store, claims),
};

/**
 * Claims up to `limit` due deliveries (claimDue) with what the worker needs to
 * send them: on PostgreSQL in the claiming statement, one round trip.
 */
export const claimDeliveries = (
  store: Store,
  input: { now: string; leaseUntil: string; limit: number },
): Promise<DeliveryToSend[]> => claimDue(store, 'deliveries', input, deliveriesToSend);

/** What the worker needs to send claimed deliveries. */
export async function loadDeliveries(
  store: Store,
  claims: Claim[],
  trx: Kysely<Database> = store.db,
): Promise<DeliveryToSend[]> {
  if (claims.length === 0) return [];
  const rows = await trx
    .selectFrom('deliveries')
    .innerJoin('webhooks', 'webhooks.id', 'deliveries.webhook_id')
    .innerJoin('events', 'events.id', 'deliveries.event_id')
    .select([
      'deliveries.id',
      'deliveries.webhook_id',
      'webhooks.url',
      'webhooks.secret_sealed',
      'webhooks.previous_secret_sealed',
      'webhooks.previous_secret_expires_at',
      'webhooks.disabled_at',
      'webhooks.failing_since',
      'events.type',
      'events.payload',
    ])
    .where(
      'deliveries.id',
      'in',
      claims.map((claim) => claim.id),
    )
    .execute();
  // In the order claimed (the worker attempts them in that order).
  const byId = new Map(rows.map((row) => [row.id, row]));
  const loaded: DeliveryToSend[] = [];
  for (const claim of claims) {
    const row = byId.get(claim.id);
    if (row) loaded.push({ ...row, attempts: claim.attempts });
  }
  return loaded;
}

/** A delivery as its webhook's owner sees it: with its event's type and pause. */
export type DeliveryOfWebhook = DeliveriesTable & { type: string; pause_id: string };

const withEvent = (db: Kysely<Database>) =>
  db
    .selectFrom('deliveries')
    .innerJoin('events', 'events.id', 'deliveries.event_id')
    .selectAll('deliveries')
    .select(['events.type', 'events.pause_id']);

/** A page of a webhook's deliveries, newest first; only those of `status` when given. */
export async function listDeliveries(
  store: Store,
  input: { webhookId: string; limit: number; startingAfter?: string | undefined; status?: DeliveryStatus | undefined },
  trx: Kysely<Database> = store.db,
): Promise<{ rows: DeliveryOfWebhook[]; hasMore: boolean }> {
  let query = withEvent(trx).where('deliveries.webhook_id', '=', input.webhookId);
  if (input.startingAfter) query = query.where('deliveries.id', '<', input.startingAfter);
  if (input.status) query = query.where('deliveries.status', '=', input.status);
  const rows = await query
    .orderBy('deliveries.id', 'desc')
    .limit(input.limit + 1)
    .execute();
  return { rows: rows.slice(0, input.limit), hasMore: rows.length > input.limit };
}

export const getDelivery = (
  store: Store,
  input: { webhookId: string; deliveryId: string },
  trx: Kysely<Database> = store.db,
): Promise<DeliveryOfWebhook | undefined> =>
  withEvent(trx)
    .where('deliveries.id', '=', input.deliveryId)
    .where('deliveries.webhook_id', '=', input.webhookId)
    .executeTakeFirst();

/** A delivery of one of a pause's events, with its webhook's URL. */
export type DeliveryOfPause = DeliveryOfWebhook & { url: string };

/**
 * The deliveries of the owner's pause's events, oldest first: its events by
 * `events_by_pause` (pause_id leads), their deliveries by `deliveries_by_event`.
 */
export const pauseDeliveriesQuery = (db: Kysely<Database>, owner: Owner, pauseId: string) =>
  db
    .selectFrom('events')
    .innerJoin('deliveries', 'deliveries.event_id', 'events.id')
    .innerJoin('webhooks', 'webhooks.id', 'deliveries.webhook_id')
    .selectAll('deliveries')
    .select(['events.type', 'events.pause_id', 'webhooks.url'])
    .where('events.pause_id', '=', pauseId)
    .where('events.mode', '=', owner.mode)
    // The owner on the delivery (the same as its event's, by fanOut): on the
    // event, SQLite would pick the owner's time index and read all their events.
    .where('deliveries.developer_id', '=', owner.developerId)
    .orderBy('deliveries.id');

export const listPauseDeliveries = (
  store: Store,
  owner: Owner,
  pauseId: string,
  trx: Kysely<Database> = store.db,
): Promise<DeliveryOfPause[]> => pauseDeliveriesQuery(trx, owner, pauseId).execute();

/**
 * Recovery of a window of a webhook's deliveries (`since` ≤ created_at <
 * `until`): re-queues its failed deliveries, and writes a delivery for each
 * of the owner's events of the webhook's types (made after the webhook) that
 * has none, such as those made while it was disabled. In one transaction in
 * which the webhook's recoveries are serialised (its row locked on
 * PostgreSQL; SQLite writes one at a time), so each event gets one delivery
 * however often it is called. Answers how many were re-queued and added.
 */
export function recoverDeliveries(
  store: Store,
  input: {
    webhookId: string;
    since: string;
    until: string;
    now: string;
    /** Missed events per batch (RECOVER_BATCH; smaller in tests). */
    batchSize?: number;
  },
): Promise<{ requeued: number; added: number }> {
  return store.transaction(async (trx) => {
    let lookup = trx
      .selectFrom('webhooks')
      .select(['developer_id', 'mode', 'events', 'created_at'])
      .where('id', '=', input.webhookId)
      // Disabled meanwhile (the caller checked before): nothing is queued for it.
      .where('disabled_at', 'is', null);
    if (store.dialect === 'postgres') lookup = lookup.forNoKeyUpdate();
    const webhook = await lookup.executeTakeFirst();
    if (!webhook) return { requeued: 0, added: 0 };
    const requeued = await trx
      .updateTable('deliveries')
      .set(requeuedFields(input.now))
      .where('webhook_id', '=', input.webhookId)
      .where('status', '=', 'failed')
      .where('created_at', '>=', input.since)
      .where('created_at', '<', input.until)
      .executeTakeFirst();
    // The missed events in bounded batches (memory bounded whatever the window):
    // each batch's deliveries take its events out of the next one's look-up.
    const missedBatch = () =>
      trx
        .selectFrom('events')
        .select(['events.id', 'events.developer_id', 'events.created_at'])
        .where('events.developer_id', '=', webhook.developer_id)
        .where('events.mode', '=', webhook.mode)
        .where('events.created_at', '>=', laterTime(input.since, webhook.created_at))
        .where('events.created_at', '<', input.until)
        .where('events.type', 'in', JSON.parse(webhook.events) as EventsTable['type'][])
        .where(({ not, exists, selectFrom }) =>
          not(
            exists(
              selectFrom('deliveries')
                .select('deliveries.id')
                .whereRef('deliveries.event_id', '=', 'events.id')
                .where('deliveries.webhook_id', '=', input.webhookId),
            ),
          ),
        )
        .orderBy('events.created_at')
        .limit(batchSize)
        .execute();
    const batchSize = input.batchSize ?? RECOVER_BATCH;
    let added = 0;
    for (;;) {
      const missed = await missedBatch();
      if (missed.length > 0) {
        await trx
          .insertInto('deliveries')
          .values(missed.map((event) => newDelivery(input.webhookId, event, input.now)))
          .execute();
      }
      added += missed.length;
      if (missed.length < batchSize) break;
    }
    const result = { requeued: Number(requeued.numUpdatedRows), added };
    if (result.requeued + result.added > 0) await announceWorkQueued(store, trx);
    return result;
  });
}
