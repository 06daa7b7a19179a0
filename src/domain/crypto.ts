import { createHash, createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

export const sha256Hex = (value: string): string => createHash('sha256').update(value).digest('hex');

export const hmacSha256 = (key: Buffer | string, data: string | Buffer): Buffer =>
  createHmac('sha256', key).update(data).digest();

/** Constant-time equality of two strings, whatever their lengths. */
export function safeEqual(a: string, b: string): boolean {
  // Hashing first gives equal-length inputs, so the length check leaks nothing.
  const left = createHash('sha256').update(a).digest();
  const right = createHash('sha256').update(b).digest();
  return timingSafeEqual(left, right) && a.length === b.length;
}

/** A 32-byte sub-key of the master secret for one purpose (HKDF-SHA256). */
export function deriveKey(masterSecret: string, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', masterSecret, 'pausepoint', purpose, 32));
}
