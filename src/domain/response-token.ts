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

// A program polling its pause reads the same link again and again, and a
// person opens a page and then answers through it: recent macs are kept (up to RECENT_MACS),
// by key (each running service has its own), so each is computed once. Only
// macs this service issued or found genuine are kept, so forged tokens cannot
// push real ones out.
const RECENT_MACS = 4096;
const recentMacs = new WeakMap<Buffer, Map<string, string>>();

function recentOf(key: Buffer): Map<string, string> {
  let recent = recentMacs.get(key);
  if (!recent) {
    recent = new Map();
    recentMacs.set(key, recent);
  }
  return recent;
}

function remember(recent: Map<string, string>, bound: string, mac: string): void {
  // Full, it starts again: dropping the oldest one at a time would make each
  // insert walk the deleted entries a Map keeps at its front until it rehashes.
  if (recent.size >= RECENT_MACS) recent.clear();
  recent.set(bound, mac);
}

const computeMac = (key: Buffer, bound: string) => hmacSha256(key, bound, 'base64url');

/** The token for what it binds: `{bound}.{mac}`. */
function issue(key: Buffer, bound: string): string {
  const recent = recentOf(key);
  let mac = recent.get(bound);
  if (mac === undefined) {
    mac = computeMac(key, bound);
    remember(recent, bound, mac);
  }
  return `${bound}.${mac}`;
}

export const responseToken = (key: Buffer, pauseId: string): string => issue(key, pauseId);

export const reviewerToken = (key: Buffer, pauseId: string, reviewerId: string): string =>
  issue(key, `${pauseId}.${reviewerId}`);

/** Whether `token` is `{bound}.{mac}` with the genuine mac; compared in constant time. */
function genuine(key: Buffer, bound: string, token: string): boolean {
  const recent = recentOf(key);
  const known = recent.get(bound);
  const mac = known ?? computeMac(key, bound);
  if (!safeEqual(token, `${bound}.${mac}`)) return false;
  if (known === undefined) remember(recent, bound, mac);
  return true;
}

/** What a token stands for, or null for any token that is not genuine. */
export function verifyResponseToken(key: Buffer, token: string): TokenSubject | null {
  const parts = token.split('.');
  const [pauseId = '', second = ''] = parts;
  if (!PAUSE_ID.test(pauseId)) return null;
  if (parts.length === 2) return genuine(key, pauseId, token) ? { pauseId } : null;
  if (parts.length !== 3 || !REVIEWER_ID.test(second)) return null;
  return genuine(key, `${pauseId}.${second}`, token) ? { pauseId, reviewerId: second } : null;
}
