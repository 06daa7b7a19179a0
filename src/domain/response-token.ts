import { hmacSha256, safeEqual } from './crypto.js';

// Response links. A pause's shared link: {pause_id}.{mac}; a reviewer's own
// link: {pause_id}.{reviewer_id}.{mac}, which binds the pause and the
// reviewer, so a forwarded link still votes as its owner. The mac is
// base64url(HMAC-SHA256(key, what it binds)). Stateless, so the same URL can
// be recomputed whenever a pause is read, and a forged or truncated token is
// refused before any database read.

const PAUSE_ID = /^pause_[0-9a-z]{26}$/;
const REVIEWER_ID = /^rvw_[0-9a-z]{26}$/;

/** What a genuine token stands for. */
export interface TokenSubject {
  pauseId: string;
  /** Set for a reviewer's own link. */
  reviewerId?: string;
}

const mac = (key: Buffer, bound: string) => hmacSha256(key, bound, 'base64url');

export const responseToken = (key: Buffer, pauseId: string): string => `${pauseId}.${mac(key, pauseId)}`;

export const reviewerToken = (key: Buffer, pauseId: string, reviewerId: string): string => {
  const bound = `${pauseId}.${reviewerId}`;
  return `${bound}.${mac(key, bound)}`;
};

/** What a token stands for, or null for any token that is not genuine. */
export function verifyResponseToken(key: Buffer, token: string): TokenSubject | null {
  const parts = token.split('.');
  const [pauseId = '', second = ''] = parts;
  if (!PAUSE_ID.test(pauseId)) return null;
  if (parts.length === 2) return safeEqual(token, responseToken(key, pauseId)) ? { pauseId } : null;
  if (parts.length !== 3 || !REVIEWER_ID.test(second)) return null;
  return safeEqual(token, reviewerToken(key, pauseId, second)) ? { pauseId, reviewerId: second } : null;
}
