import type { Kysely } from 'kysely';
import type { Owner } from './pauses.js';
import type { Database } from './schema.js';
import type { Store } from './store.js';

// The first response to each Idempotency-Key of a create, kept for a window
// the caller chooses: a record created at or before `windowStart` is expired.

/** The first response to a key: the hash of the request it answered, and the response (its body decoded). */
export interface IdempotencyRecord {
  requestHash: string;
  responseStatus: number;
  responseBody: unknown;
}

/** The owner's unexpired record of this key, if any. */
export async function findIdempotencyRecord(
  store: Store,
  input: Owner & { key: string; windowStart: string },
  trx: Kysely<Database> = store.db,
): Promise<IdempotencyRecord | undefined> {
  const row = await trx
    .selectFrom('idempotency_keys')
    .select(['request_hash', 'response_status', 'response_body'])
    .where('developer_id', '=', input.developerId)
    .where('mode', '=', input.mode)
    .where('key', '=', input.key)
    .where('created_at', '>', input.windowStart)
    .executeTakeFirst();
  return (
    row && {
      requestHash: row.request_hash,
      responseStatus: row.response_status,
      responseBody: JSON.parse(row.response_body),
    }
  );
}

/**
 * Records the response to a key, in the creating transaction. An expired
 * record of the same key is replaced; an unexpired one is left alone, so a
 * concurrent twin fails on the primary key.
 */
export async function recordIdempotentResponse(
  store: Store,
  input: Owner & {
    key: string;
    requestHash: string;
    responseStatus: number;
    responseBody: unknown;
    now: string;
    windowStart: string;
  },
  trx: Kysely<Database> = store.db,
): Promise<void> {
  await trx
    .deleteFrom('idempotency_keys')
    .where('developer_id', '=', input.developerId)
    .where('mode', '=', input.mode)
    .where('key', '=', input.key)
    .where('created_at', '<=', input.windowStart)
    .execute();
  await trx
    .insertInto('idempotency_keys')
    .values({
      developer_id: input.developerId,
      mode: input.mode,
      key: input.key,
      request_hash: input.requestHash,
      response_status: input.responseStatus,
      response_body: JSON.stringify(input.responseBody),
      created_at: input.now,
    })
    .execute();
}
