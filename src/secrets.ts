import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Config } from './config.js';
import { deriveKey } from './domain/crypto.js';

// The master secret and the purpose-bound keys derived from it. Rotating
// SECRET_KEY invalidates response links and makes stored webhook secrets
// unreadable, so it is generated once and kept.

export interface ServiceKeys {
  /** Signs response-page tokens. */
  respondToken: Buffer;
  /** Encrypts secrets at rest (webhook secrets). */
  atRest: Buffer;
}

export function deriveServiceKeys(masterSecret: string): ServiceKeys {
  return {
    respondToken: deriveKey(masterSecret, 'respond-token'),
    atRest: deriveKey(masterSecret, 'at-rest-encryption'),
  };
}

/**
 * SECRET_KEY, or on SQLite a secret generated once into the data folder
 * (created with mode 0600, reused on every later start).
 */
export function resolveMasterSecret(config: Config, warn: (message: string) => void): string {
  if (config.secretKey) return config.secretKey;
  if (config.database.kind !== 'sqlite') throw new Error('SECRET_KEY is required with PostgreSQL');
  if (config.database.path === ':memory:') {
    warn('SECRET_KEY is not set; using a throw-away secret for this in-memory database');
    return randomBytes(32).toString('hex');
  }
  const file = join(dirname(config.database.path), 'secret.key');
  try {
    return readFileSync(file, 'utf8').trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const secret = randomBytes(32).toString('hex');
  writeFileSync(file, `${secret}\n`, { mode: 0o600, flag: 'wx' });
  warn(`SECRET_KEY is not set; generated one into ${file}. Keep that file, or set SECRET_KEY.`);
  return secret;
}
