import type { Kysely } from 'kysely';
import { newId } from '../domain/ids.js';
import { type IssuedSecret, issueApiKey, issueSessionToken, MODES, type Mode } from '../domain/keys.js';
import { prepared } from './prepared.js';
import type { Database, DevelopersTable } from './schema.js';
import type { Store } from './store.js';
import { announceKeysRotated } from './wake-ups.js';

// Developers, their API keys and login sessions.

export interface KeySummary {
  mode: Mode;
  prefix: string;
  created_at: string;
}

export type Developer = Pick<DevelopersTable, 'id' | 'email' | 'plan' | 'created_at'>;

export async function createDeveloper(
  store: Store,
  input: { email: string; passwordHash: string; plan: string; now: string },
): Promise<{ developer: Developer; keys: Record<Mode, IssuedSecret> }> {
  const developer = { id: newId('dev'), email: input.email, plan: input.plan, created_at: input.now };
  const keys = { live: issueApiKey('live'), test: issueApiKey('test') };
  await store.transaction(async (trx) => {
    await trx
      .insertInto('developers')
      .values({ ...developer, password_hash: input.passwordHash })
      .execute();
    await trx
      .insertInto('api_keys')
      .values(
        MODES.map((mode) => ({
          id: newId('key'),
          developer_id: developer.id,
          mode,
          key_hash: keys[mode].hash,
          prefix: keys[mode].prefix,
          created_at: input.now,
        })),
      )
      .execute();
  });
  return { developer, keys };
}

export const findDeveloperByEmail = (store: Store, email: string, trx: Kysely<Database> = store.db) =>
  trx.selectFrom('developers').selectAll().where('email', '=', email).executeTakeFirst();

const selectDeveloper = prepared((db, input: { id: string }) =>
  db.selectFrom('developers').select(['id', 'email', 'plan', 'created_at']).where('id', '=', input.id),
);

/** A developer by id (a live create reads the plan in its transaction). */
export const getDeveloper = async (store: Store, id: string, trx?: Kysely<Database>): Promise<Developer | undefined> =>
  (await selectDeveloper(store, { id }, trx))[0];

export const listKeys = (store: Store, developerId: string, trx: Kysely<Database> = store.db): Promise<KeySummary[]> =>
  trx
    .selectFrom('api_keys')
    .select(['mode', 'prefix', 'created_at'])
    .where('developer_id', '=', developerId)
    .orderBy('mode')
    .execute();

export const findApiKey = (store: Store, keyHash: string, trx: Kysely<Database> = store.db) =>
  trx.selectFrom('api_keys').select(['developer_id', 'mode']).where('key_hash', '=', keyHash).executeTakeFirst();

export async function createSession(
  store: Store,
  input: { developerId: string; now: string; expiresAt: string },
  trx: Kysely<Database> = store.db,
): Promise<{ token: string; expires_at: string }> {
  const token = issueSessionToken();
  await trx
    .insertInto('sessions')
    .values({
      id: newId('sess'),
      developer_id: input.developerId,
      token_hash: token.hash,
      expires_at: input.expiresAt,
      created_at: input.now,
    })
    .execute();
  return { token: token.plaintext, expires_at: input.expiresAt };
}

export const findSession = (store: Store, tokenHash: string, now: string, trx: Kysely<Database> = store.db) =>
  trx
    .selectFrom('sessions')
    .select('developer_id')
    .where('token_hash', '=', tokenHash)
    .where('expires_at', '>', now)
    .executeTakeFirst();

/**
 * Replaces the developer's key of one mode. With `currentHash` (or
 * `currentPrefix`, the key a page showed) the update only happens if that key
 * is still the active one, so of two racing rotations with the same key
 * exactly one wins. Returns null when nothing was replaced.
 */
export async function rotateKey(
  store: Store,
  input: {
    developerId: string;
    mode: Mode;
    currentHash?: string | undefined;
    currentPrefix?: string | undefined;
    now: string;
  },
): Promise<(KeySummary & { key: string }) | null> {
  const issued = issueApiKey(input.mode);
  return store.transaction(async (trx) => {
    let update = trx
      .updateTable('api_keys')
      .set({ key_hash: issued.hash, prefix: issued.prefix, created_at: input.now })
      .where('developer_id', '=', input.developerId)
      .where('mode', '=', input.mode);
    if (input.currentHash) update = update.where('key_hash', '=', input.currentHash);
    if (input.currentPrefix) update = update.where('prefix', '=', input.currentPrefix);
    const result = await update.executeTakeFirst();
    if (Number(result.numUpdatedRows) !== 1) return null;
    // Every instance drops the old key from its caches when this commits.
    await announceKeysRotated(store, input.developerId, trx);
    return { key: issued.plaintext, mode: input.mode, prefix: issued.prefix, created_at: input.now };
  });
}
