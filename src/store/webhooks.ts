import type { Kysely, Transaction } from 'kysely';
import type { Mode } from '../domain/keys.js';
import type { Webhook } from '../domain/webhooks.js';
import type { Owner } from './pauses.js';
import type { Database, WebhooksTable } from './schema.js';
import type { Store } from './store.js';

// The webhooks a developer registers, and the cap on how many each mode holds.

type WebhookRow = Pick<
  WebhooksTable,
  'id' | 'mode' | 'url' | 'events' | 'created_at' | 'disabled_at' | 'disabled_reason'
>;
const WEBHOOK_COLUMNS = ['id', 'mode', 'url', 'events', 'created_at', 'disabled_at', 'disabled_reason'] as const;

const decodeWebhook = (row: WebhookRow): Webhook => ({
  id: row.id,
  mode: row.mode,
  url: row.url,
  events: JSON.parse(row.events) as string[],
  createdAt: row.created_at,
  status: row.disabled_at === null ? 'active' : 'disabled',
  disabledReason: row.disabled_reason,
});

/** The owner's webhooks in its mode, newest first. */
export async function listWebhooks(store: Store, owner: Owner, trx: Kysely<Database> = store.db): Promise<Webhook[]> {
  const rows = await trx
    .selectFrom('webhooks')
    .select(WEBHOOK_COLUMNS)
    .where('developer_id', '=', owner.developerId)
    .where('mode', '=', owner.mode)
    .orderBy('id', 'desc')
    .execute();
  return rows.map(decodeWebhook);
}

/** The owner's webhook of that id in its mode (without its secret), or undefined. */
export async function getOwnedWebhook(
  store: Store,
  owner: Owner,
  webhookId: string,
  trx: Kysely<Database> = store.db,
): Promise<Webhook | undefined> {
  const row = await trx
    .selectFrom('webhooks')
    .select(WEBHOOK_COLUMNS)
    .where('id', '=', webhookId)
    .where('developer_id', '=', owner.developerId)
    .where('mode', '=', owner.mode)
    .executeTakeFirst();
  return row && decodeWebhook(row);
}

/** Whether the webhook exists and is this owner's (developer and mode). */
export async function isOwnedWebhook(
  store: Store,
  owner: Owner,
  webhookId: string,
  trx: Kysely<Database> = store.db,
): Promise<boolean> {
  const webhook = await trx
    .selectFrom('webhooks')
    .select('id')
    .where('id', '=', webhookId)
    .where('developer_id', '=', owner.developerId)
    .where('mode', '=', owner.mode)
    .executeTakeFirst();
  return webhook !== undefined;
}

/** Deletes the owner's webhook; false when the owner has no webhook of that id in its mode. */
export async function deleteWebhook(
  store: Store,
  owner: Owner,
  webhookId: string,
  trx: Kysely<Database> = store.db,
): Promise<boolean> {
  const result = await trx
    .deleteFrom('webhooks')
    .where('id', '=', webhookId)
    .where('developer_id', '=', owner.developerId)
    .where('mode', '=', owner.mode)
    .executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}

/**
 * Inserts `webhook` unless its owner already holds `cap` webhooks in its
 * mode; false when the cap is reached. The count and the insert share one
 * transaction in which the owner's registrations are serialised, so a burst
 * of concurrent registrations cannot all read the same count: on PostgreSQL
 * the developer's row is locked first, on SQLite the one connection runs one
 * write transaction at a time already.
 */
export function insertWebhookUnderCap(
  store: Store,
  webhook: Webhook & { developerId: string; secretSealed: string },
  cap: number,
): Promise<boolean> {
  return store.write(async (trx) => {
    await lockOwner(store, trx, webhook.developerId);
    if ((await countWebhooks(trx, webhook.developerId, webhook.mode)) >= cap) return false;
    await trx
      .insertInto('webhooks')
      .values({
        id: webhook.id,
        developer_id: webhook.developerId,
        mode: webhook.mode,
        url: webhook.url,
        events: JSON.stringify(webhook.events),
        secret_sealed: webhook.secretSealed,
        created_at: webhook.createdAt,
      })
      .execute();
    return true;
  });
}

/**
 * Until the transaction ends. NO KEY UPDATE, not UPDATE: it queues the
 * owner's other registrations but not inserts elsewhere that only reference
 * the row (a pause's foreign key takes KEY SHARE).
 */
async function lockOwner(store: Store, trx: Transaction<Database>, developerId: string): Promise<void> {
  if (store.dialect !== 'postgres') return;
  await trx.selectFrom('developers').select('id').where('id', '=', developerId).forNoKeyUpdate().execute();
}

async function countWebhooks(trx: Transaction<Database>, developerId: string, mode: Mode): Promise<number> {
  const { count } = await trx
    .selectFrom('webhooks')
    .select((eb) => eb.fn.countAll().as('count'))
    .where('developer_id', '=', developerId)
    .where('mode', '=', mode)
    .executeTakeFirstOrThrow();
  return Number(count);
}

/**
 * Replaces the owner's webhook's secret: the current one becomes the previous
 * one, still signing until `previousExpiresAt`; a previous one from an earlier
 * rotation is dropped, so at most two are ever valid. False when the owner has
 * no webhook of that id in its mode.
 */
export async function rotateWebhookSecret(
  store: Store,
  owner: Owner,
  input: { webhookId: string; secretSealed: string; previousExpiresAt: string },
): Promise<boolean> {
  const result = await store.db
    .updateTable('webhooks')
    .set((eb) => ({
      previous_secret_sealed: eb.ref('secret_sealed'),
      previous_secret_expires_at: input.previousExpiresAt,
      secret_sealed: input.secretSealed,
    }))
    .where('id', '=', input.webhookId)
    .where('developer_id', '=', owner.developerId)
    .where('mode', '=', owner.mode)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * Disables a webhook (if it is active): no delivery is made for it from now
 * on, and the workers settle each of its deliveries they load as failed
 * without sending it. Its delivery rows are not touched here: one in flight
 * is settled with its real answer by the worker that holds it. Answers its
 * owner (with the email, to tell them) and URL when this call disabled it,
 * undefined when it was already disabled or is gone. In the caller's
 * transaction, which may also queue that email.
 */
export async function disableWebhook(
  store: Store,
  input: {
    webhookId: string;
    reason: string;
    now: string;
    /** Only if it is still failing since this time or earlier (no success has cleared its streak since). */
    failingSinceAtMost?: string | undefined;
  },
  trx: Kysely<Database> = store.db,
): Promise<{ developerId: string; email: string; mode: Mode; url: string } | undefined> {
  let update = trx
    .updateTable('webhooks')
    .set({ disabled_at: input.now, disabled_reason: input.reason })
    .where('id', '=', input.webhookId)
    .where('disabled_at', 'is', null);
  if (input.failingSinceAtMost !== undefined) update = update.where('failing_since', '<=', input.failingSinceAtMost);
  const disabled = await update.returning(['developer_id', 'mode', 'url']).executeTakeFirst();
  if (!disabled) return undefined;
  const owner = await trx
    .selectFrom('developers')
    .select('email')
    .where('id', '=', disabled.developer_id)
    .executeTakeFirstOrThrow();
  return { developerId: disabled.developer_id, email: owner.email, mode: disabled.mode, url: disabled.url };
}

/**
 * Enables the owner's webhook again, its failing streak reset; false when the
 * owner has no webhook of that id in its mode.
 */
export async function enableWebhook(store: Store, owner: Owner, webhookId: string, now: string): Promise<boolean> {
  const result = await store.db
    .updateTable('webhooks')
    .set((eb) => ({
      disabled_at: null,
      disabled_reason: null,
      failing_since: eb.case().when('disabled_at', 'is not', null).then(null).else(eb.ref('failing_since')).end(),
      enabled_at: eb.case().when('disabled_at', 'is not', null).then(now).else(eb.ref('enabled_at')).end(),
    }))
    .where('id', '=', webhookId)
    .where('developer_id', '=', owner.developerId)
    .where('mode', '=', owner.mode)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}
