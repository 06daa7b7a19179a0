import { createHmac, hash, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';

export const sha256Hex = (value: string): string => hash('sha256', value, 'hex');

const RANDOM_POOL_BYTES = 4096;
let randomPool = Buffer.alloc(0);
let randomOffset = 0;

/**
 * Bytes from the CSPRNG, drawn from a pool refilled 4 KiB at a time (as Node
 * does for randomUUID): one call serves hundreds of ids. Use them at once;
 * the view is never handed out again.
 */
export function randomBytesPooled(size: number): Buffer {
  if (randomOffset + size > randomPool.length) {
    randomPool = randomBytes(Math.max(RANDOM_POOL_BYTES, size));
    randomOffset = 0;
  }
  const bytes = randomPool.subarray(randomOffset, randomOffset + size);
  randomOffset += size;
  return bytes;
}

/** HMAC-SHA256 as text, encoded by the digest itself (no Buffer in between: every response URL makes one). */
export const hmacSha256 = (
  key: Buffer | string,
  data: string | Buffer,
  encoding: 'base64' | 'base64url' | 'hex',
): string => createHmac('sha256', key).update(data).digest(encoding);

/** Constant-time equality of two strings, whatever their lengths. */
export function safeEqual(a: string, b: string): boolean {
  // Hashing first gives equal-length inputs, so the length check leaks nothing.
  const left = hash('sha256', a, 'buffer');
  const right = hash('sha256', b, 'buffer');
  return timingSafeEqual(left, right) && a.length === b.length;
}

/** A 32-byte sub-key of the master secret for one purpose (HKDF-SHA256). */
export function deriveKey(masterSecret: string, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', masterSecret, 'pausepoint', purpose, 32));
}
