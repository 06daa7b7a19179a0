import { randomBytes } from 'node:crypto';
import { sha256Hex } from './crypto.js';

// API keys (docs/concepts.md, "Accounts and keys") and login session tokens. Only the SHA-256 of a key is
// stored; the display prefix is the mode prefix plus the first 6 hex digits.
export type Mode = 'live' | 'test';
export const MODES: readonly Mode[] = ['live', 'test'];

const API_KEY = /^svc_(live|test)_[0-9a-f]{48}$/;
const SESSION_TOKEN = /^svc_sess_[0-9a-f]{48}$/;

export interface IssuedSecret {
  plaintext: string;
  hash: string;
  prefix: string;
}

function issue(kind: string): IssuedSecret {
  const plaintext = `svc_${kind}_${randomBytes(24).toString('hex')}`;
  return { plaintext, hash: sha256Hex(plaintext), prefix: plaintext.slice(0, `svc_${kind}_`.length + 6) };
}

export const issueApiKey = (mode: Mode): IssuedSecret => issue(mode);
export const issueSessionToken = (): IssuedSecret => issue('sess');
/** The console's cookie token: not a Bearer credential (parseCredential refuses it). */
export const issueConsoleToken = (): IssuedSecret => issue('console');
/** The reviewers' inbox: the token of an emailed sign-in link, and the cookie's token. */
export const issueInboxLinkToken = (): IssuedSecret => issue('inboxlink');
export const issueInboxToken = (): IssuedSecret => issue('inbox');

export type Credential = { kind: 'api_key'; mode: Mode; hash: string } | { kind: 'session'; hash: string };

/** Recognises a bearer credential by its shape; anything else is not one. */
export function parseCredential(token: string): Credential | null {
  const key = API_KEY.exec(token);
  if (key) return { kind: 'api_key', mode: key[1] as Mode, hash: sha256Hex(token) };
  if (SESSION_TOKEN.test(token)) return { kind: 'session', hash: sha256Hex(token) };
  return null;
}
