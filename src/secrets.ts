import { randomBytes } from 'node:crypto';
import {
  closeSync,
  fsyncSync,
  linkSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
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
  /** Signs the console's CSRF tokens (an HMAC of the session id). */
  consoleCsrf: Buffer;
  /** Signs the reviewers' inbox's CSRF tokens. */
  inboxCsrf: Buffer;
}

export function deriveServiceKeys(masterSecret: string): ServiceKeys {
  return {
    respondToken: deriveKey(masterSecret, 'respond-token'),
    atRest: deriveKey(masterSecret, 'at-rest-encryption'),
    consoleCsrf: deriveKey(masterSecret, 'console-csrf'),
    inboxCsrf: deriveKey(masterSecret, 'inbox-csrf'),
  };
}

/** The shortest master secret accepted, from SECRET_KEY or the secret file. */
export const MIN_SECRET_LENGTH = 32;

/**
 * SECRET_KEY, or on SQLite a secret generated once into the data folder
 * (mode 0600, reused on every later start). A secret file shorter than
 * MIN_SECRET_LENGTH stops the start: running with it would let anyone forge
 * response links.
 */
export function resolveMasterSecret(config: Config, warn: (message: string) => void): string {
  if (config.secretKey) return config.secretKey;
  if (config.database.kind !== 'sqlite') throw new Error('SECRET_KEY is required with PostgreSQL');
  if (config.database.path === ':memory:') {
    warn('SECRET_KEY is not set; using a throw-away secret for this in-memory database');
    return randomBytes(32).toString('hex');
  }
  const file = join(dirname(config.database.path), 'secret.key');
  const existing = readSecretFile(file);
  if (existing !== undefined) return existing;
  mkdirSync(dirname(file), { recursive: true });
  const secret = createSecretFile(file, randomBytes(32).toString('hex'));
  warn(`SECRET_KEY is not set; generated one into ${file}. Keep that file, or set SECRET_KEY.`);
  return secret;
}

/** The secret in `file`, undefined when there is no such file. */
function readSecretFile(file: string): string | undefined {
  let secret: string;
  try {
    secret = readFileSync(file, 'utf8').trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  if (secret.length < MIN_SECRET_LENGTH) {
    throw new Error(
      `${file} holds a secret shorter than ${MIN_SECRET_LENGTH} characters (${secret.length}); it was probably ` +
        'cut short when it was written (a full disk?). If nothing depends on it yet (no response links sent, ' +
        'no webhooks registered), delete it and start again to generate a new one; otherwise restore it from ' +
        `a backup. Or set SECRET_KEY to a secret of at least ${MIN_SECRET_LENGTH} characters.`,
    );
  }
  return secret;
}

/**
 * Writes `secret` as `file` whole or not at all: into a temporary file in the
 * same folder, synced, then linked into place and the folder synced. Linking
 * never replaces a file, so when another process starting at the same moment
 * got there first, its secret is the one kept and returned.
 */
export function createSecretFile(file: string, secret: string): string {
  const temporary = `${file}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    const descriptor = openSync(temporary, 'wx', 0o600);
    try {
      writeFileSync(descriptor, `${secret}\n`);
      fsyncSync(descriptor);
    } finally {
      closeSync(descriptor);
    }
    try {
      linkSync(temporary, file);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') {
        const kept = readSecretFile(file);
        if (kept !== undefined) return kept;
      }
      // A file system without hard links: rename, which is as atomic but
      // would replace a secret written at the same moment.
      if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'ENOSYS') throw error;
      renameSync(temporary, file);
    }
    rmSync(temporary, { force: true });
    syncFolder(dirname(file));
    return secret;
  } finally {
    rmSync(temporary, { force: true });
  }
}

function syncFolder(folder: string): void {
  const descriptor = openSync(folder, 'r');
  try {
    fsyncSync(descriptor);
  } finally {
    closeSync(descriptor);
  }
}
