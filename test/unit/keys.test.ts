import { createHash, createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { deriveKey, hmacSha256, safeEqual, sha256Hex } from '../../src/domain/crypto.js';
import { newId } from '../../src/domain/ids.js';
import { issueApiKey, issueSessionToken, MODES, parseCredential } from '../../src/domain/keys.js';
import { DUMMY_PASSWORD_HASH, hashPassword, verifyPassword } from '../../src/domain/passwords.js';

const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

describe('API keys and session tokens', () => {
  it('issues keys as svc_<mode>_ + 48 hex, with their SHA-256 and display prefix', () => {
    expect(MODES).toEqual(['live', 'test']);
    for (const mode of MODES) {
      const key = issueApiKey(mode);
      expect(key.plaintext).toMatch(new RegExp(`^svc_${mode}_[0-9a-f]{48}$`));
      expect(key.hash).toBe(sha256(key.plaintext));
      expect(key.prefix).toBe(key.plaintext.slice(0, 15));
      expect(key.prefix).toMatch(new RegExp(`^svc_${mode}_[0-9a-f]{6}$`));
    }
  });

  it('issues session tokens as svc_sess_ + 48 hex', () => {
    const token = issueSessionToken();
    expect(token.plaintext).toMatch(/^svc_sess_[0-9a-f]{48}$/);
    expect(token.hash).toBe(sha256(token.plaintext));
  });

  it('never issues the same secret twice', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 500; i++) {
      seen.add(issueApiKey('live').plaintext);
      seen.add(issueSessionToken().plaintext);
    }
    expect(seen.size).toBe(1000);
  });

  it('recognises live keys, test keys and session tokens by shape, hashing the whole credential', () => {
    const live = issueApiKey('live').plaintext;
    const test = issueApiKey('test').plaintext;
    const session = issueSessionToken().plaintext;
    expect(parseCredential(live)).toEqual({ kind: 'api_key', mode: 'live', hash: sha256(live) });
    expect(parseCredential(test)).toEqual({ kind: 'api_key', mode: 'test', hash: sha256(test) });
    expect(parseCredential(session)).toEqual({ kind: 'session', hash: sha256(session) });
  });

  it('refuses anything that is not exactly a credential', () => {
    const hex = 'a'.repeat(48);
    for (const token of [
      '',
      'svc_live_',
      `svc_live_${'a'.repeat(47)}`,
      `svc_live_${'a'.repeat(49)}`,
      `svc_live_${'A'.repeat(48)}`,
      `svc_live_${'g'.repeat(48)}`,
      `svc_prod_${hex}`,
      `sk_live_${hex}`,
      `SVC_LIVE_${hex}`,
      ` svc_live_${hex}`,
      `svc_live_${hex} `,
      `svc_live_${hex}\n`,
      `svc_test_${hex}x`,
      `svc_sess_${'a'.repeat(47)}`,
      `Bearer svc_live_${hex}`,
    ]) {
      expect(parseCredential(token), JSON.stringify(token)).toBeNull();
    }
  });
});

describe('passwords', () => {
  it('hashes with scrypt in a self-describing format and verifies', async () => {
    const hash = await hashPassword('correct horse battery');
    expect(hash).toMatch(/^scrypt\$16384\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    expect(hash).not.toContain('correct horse battery');
    expect(await verifyPassword('correct horse battery', hash)).toBe(true);
    expect(await verifyPassword('correct horse batterY', hash)).toBe(false);
    expect(await verifyPassword('correct horse battery ', hash)).toBe(false);
    expect(await verifyPassword('', hash)).toBe(false);
  });

  it('salts every hash', async () => {
    const [a, b] = await Promise.all([hashPassword('same password'), hashPassword('same password')]);
    expect(a).not.toBe(b);
    expect(await verifyPassword('same password', a)).toBe(true);
    expect(await verifyPassword('same password', b)).toBe(true);
  });

  it('handles non-ASCII passwords', async () => {
    const hash = await hashPassword('pässwörd-密码-🔑');
    expect(await verifyPassword('pässwörd-密码-🔑', hash)).toBe(true);
    expect(await verifyPassword('passwörd-密码-🔑', hash)).toBe(false);
  });

  it('honours the cost stored in the hash, so old hashes keep working', async () => {
    // A hash made with other parameters than today's.
    const salt = Buffer.from('0123456789abcdef');
    const { scryptSync } = await import('node:crypto');
    const key = scryptSync('old password!', salt, 32, { N: 1024, r: 8, p: 1 });
    const stored = ['scrypt', 1024, 8, 1, salt.toString('base64url'), key.toString('base64url')].join('$');
    expect(await verifyPassword('old password!', stored)).toBe(true);
    expect(await verifyPassword('new password!', stored)).toBe(false);
  });

  it('says no, without throwing, to a stored hash it cannot read', async () => {
    for (const stored of ['', 'scrypt', 'scrypt$16384$8$1', 'bcrypt$2b$10$abc$def', 'plain text password']) {
      expect(await verifyPassword('plain text password', stored)).toBe(false);
    }
  });

  it('has a dummy hash that is a real scrypt hash no usual password matches', async () => {
    expect(DUMMY_PASSWORD_HASH).toMatch(/^scrypt\$16384\$8\$1\$/);
    expect(await verifyPassword('correct horse battery', DUMMY_PASSWORD_HASH)).toBe(false);
    expect(await verifyPassword('', DUMMY_PASSWORD_HASH)).toBe(false);
  });
});

describe('crypto helpers', () => {
  it('sha256Hex matches the FIPS 180-2 vector', () => {
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });

  it('hmacSha256 matches RFC 4231 test case 2', () => {
    expect(hmacSha256('Jefe', 'what do ya want for nothing?', 'hex')).toBe(
      '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843',
    );
    expect(hmacSha256(Buffer.from('k'), Buffer.from('d'), 'base64url')).toEqual(
      createHmac('sha256', 'k').update('d').digest('base64url'),
    );
  });

  it('safeEqual compares exactly, whatever the lengths', () => {
    expect(safeEqual('sha256=abc', 'sha256=abc')).toBe(true);
    expect(safeEqual('', '')).toBe(true);
    expect(safeEqual('sha256=abc', 'sha256=abd')).toBe(false);
    expect(safeEqual('sha256=abc', 'sha256=ab')).toBe(false);
    expect(safeEqual('sha256=ab', 'sha256=abc')).toBe(false);
    expect(safeEqual('abc', 'ABC')).toBe(false);
    expect(safeEqual('', 'a')).toBe(false);
  });

  it('deriveKey gives 32 stable bytes per secret and purpose', () => {
    const a = deriveKey('master secret one', 'respond-token');
    expect(a).toHaveLength(32);
    expect(deriveKey('master secret one', 'respond-token')).toEqual(a);
    expect(deriveKey('master secret one', 'at-rest-encryption')).not.toEqual(a);
    expect(deriveKey('master secret two', 'respond-token')).not.toEqual(a);
    expect(a.equals(Buffer.alloc(32))).toBe(false);
  });
});

describe('identifiers', () => {
  const body = /^[0-9a-hjkmnp-tv-z]{26}$/; // Crockford base32, lower case: no i, l, o, u

  it('is a type prefix and 26 Crockford base32 characters', () => {
    for (const prefix of ['dev', 'key', 'sess', 'pause', 'wh', 'evt', 'dlv', 'ntf', 'bill'] as const) {
      const id = newId(prefix);
      expect(id.startsWith(`${prefix}_`)).toBe(true);
      expect(id.slice(prefix.length + 1)).toMatch(body);
    }
  });

  it('encodes the time in its first 10 characters, so ids sort by creation time', () => {
    expect(newId('dev', 0).slice(4, 14)).toBe('0000000000');
    expect(newId('dev', 31).slice(4, 14)).toBe('000000000z');
    expect(newId('dev', 32).slice(4, 14)).toBe('0000000010');
    const times = [1, 1_000, 1_700_000_000_000, 1_700_000_000_001, 1_800_000_000_000, 2 ** 48 - 1];
    const ids = times.map((t) => newId('pause', t));
    expect([...ids].sort()).toEqual(ids);
    // Same time, same time prefix.
    expect(newId('dev', 1_700_000_000_000).slice(0, 14)).toBe(newId('dev', 1_700_000_000_000).slice(0, 14));
  });

  it('is unique even within one millisecond', () => {
    const ids = new Set(Array.from({ length: 2000 }, () => newId('evt', 1_700_000_000_000)));
    expect(ids.size).toBe(2000);
  });
});
