import { randomBytes, type ScryptOptions, scrypt } from 'node:crypto';
import { safeEqual } from './crypto.js';

// scrypt from node:crypto, stored as scrypt$N$r$p$salt$hash so the cost can be
// raised later without breaking old hashes.
const COST = { N: 16384, r: 8, p: 1 };
const KEY_LENGTH = 32;

/** The shortest and the longest password an account may have, in characters. */
export const MIN_PASSWORD_LENGTH = 10;
export const MAX_PASSWORD_LENGTH = 128;

function derive(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password, salt, KEY_LENGTH, { ...options, maxmem: 64 * 1024 * 1024 }, (error, key) =>
      error ? reject(error) : resolve(key),
    ),
  );
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, COST);
  return ['scrypt', COST.N, COST.r, COST.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, N, r, p, salt, expected] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !expected) return false;
  const key = await derive(password, Buffer.from(salt, 'base64url'), { N: Number(N), r: Number(r), p: Number(p) });
  return safeEqual(key.toString('base64url'), expected);
}

/** A hash of nothing, checked when the email is unknown so both failures take as long. */
export const DUMMY_PASSWORD_HASH = await hashPassword(randomBytes(16).toString('hex'));
