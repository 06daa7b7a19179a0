import type { ServiceContext } from '../context.js';
import { isoTime } from '../domain/clock.js';
import type { Mode } from '../domain/keys.js';
import { findApiKey, findSession, type KeySummary, listKeys, rotateKey } from '../store/accounts.js';

// Whose credential a request carries, for the authentication of every /v1
// request (src/http/auth.ts); and rotating an API key, for POST /v1/auth/keys/rotate and the console's keys
// page alike: the store replaces the key (only if it is still the one the
// caller names), and every instance forgets the old one once that commits.

export type RotatedKey = KeySummary & { key: string };

/**
 * Replaces the developer's key of `mode` and returns the new one (its
 * plaintext exists only in this answer). With `currentHash` (the key the API
 * was called with) or `currentPrefix` (the key a console page showed) the key
 * is replaced only if it is still that one, so of two racing rotations, or a
 * form sent twice, exactly one wins; the other gets null.
 */
export async function rotateDeveloperKey(
  services: Pick<ServiceContext, 'store' | 'clock'>,
  input: { developerId: string; mode: Mode; currentHash?: string | undefined; currentPrefix?: string | undefined },
): Promise<RotatedKey | null> {
  return rotateKey(services.store, { ...input, now: isoTime(services.clock.now()) });
}

/** The developer's keys, by their first characters (the plaintext is never kept). */
export const keysOf = (services: Pick<ServiceContext, 'store'>, developerId: string): Promise<KeySummary[]> =>
  listKeys(services.store, developerId);

/** The developer and mode an API key (by its hash) stands for; undefined for no key of ours. */
export async function apiKeyOwner(
  services: Pick<ServiceContext, 'store'>,
  keyHash: string,
): Promise<{ developerId: string; mode: Mode } | undefined> {
  const row = await findApiKey(services.store, keyHash);
  return row ? { developerId: row.developer_id, mode: row.mode } : undefined;
}

/** The developer a login session (by its token's hash) stands for while it has not expired. */
export async function sessionOwner(
  services: Pick<ServiceContext, 'store' | 'clock'>,
  tokenHash: string,
): Promise<string | undefined> {
  const session = await findSession(services.store, tokenHash, isoTime(services.clock.now()));
  return session?.developer_id;
}
