import { hmacSha256, safeEqual } from './crypto.js';

// The response page's address: {pause_id}.{base64url(HMAC-SHA256(key, pause_id))}.
// Stateless, so the same URL can be recomputed whenever a pause is read.

const PAUSE_ID = /^pause_[0-9a-z]{26}$/;

export const responseToken = (key: Buffer, pauseId: string): string =>
  `${pauseId}.${hmacSha256(key, pauseId).toString('base64url')}`;

/** The pause id a token stands for, or null for any token that is not genuine. */
export function verifyResponseToken(key: Buffer, token: string): string | null {
  const dot = token.indexOf('.');
  const pauseId = token.slice(0, dot);
  if (dot < 0 || !PAUSE_ID.test(pauseId)) return null;
  return safeEqual(token, responseToken(key, pauseId)) ? pauseId : null;
}
