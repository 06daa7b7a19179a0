import type { ServiceContext } from '../context.js';
import { isoTime } from '../domain/clock.js';
import type { Mode } from '../domain/keys.js';
import { type KeySummary, listKeys, rotateKey } from '../store/accounts.js';

// Rotating an API key, for POST /v1/auth/keys/rotate and the console's keys
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
