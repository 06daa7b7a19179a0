import { randomBytesPooled } from './crypto.js';

// Identifiers are a type prefix and a ULID-style body: 10 characters of
// millisecond time then 16 of randomness, in Crockford base32, so they sort
// by creation time and reveal nothing guessable.
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

export type IdPrefix =
  | 'dev'
  | 'key'
  | 'sess'
  | 'csess'
  | 'ilink'
  | 'isess'
  | 'pause'
  | 'rvw'
  | 'wh'
  | 'evt'
  | 'dlv'
  | 'att'
  | 'ntf'
  | 'bill';

/** The longest id a request may name (ours are at most 32 characters): a longer one is refused unread. */
export const MAX_ID_LENGTH = 64;

export function newId(prefix: IdPrefix, now = Date.now()): string {
  let time = '';
  for (let rest = now, i = 0; i < 10; i++, rest = Math.floor(rest / 32)) {
    time = ALPHABET[rest % 32] + time;
  }
  let random = '';
  for (const byte of randomBytesPooled(16)) random += ALPHABET[byte % 32];
  return `${prefix}_${time}${random}`;
}

/** `count` new ids that sort in the order given, for rows written together and listed in that order. */
export const newIds = (prefix: IdPrefix, count: number, now = Date.now()): string[] =>
  Array.from({ length: count }, () => newId(prefix, now)).sort();

/** Whether a value from a URL or form has the shape of a pause id (checked before it reaches a query). */
export const looksLikePauseId = (value: unknown): value is string =>
  typeof value === 'string' && /^pause_[0-9A-Za-z]{1,64}$/.test(value);
