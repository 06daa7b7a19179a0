import { createHash, randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.js';
import { openStore, type Store } from '../../../src/store/store.js';
import { call, registerAccount } from '../../helpers/http.js';
import { startTestService, type TestService } from '../../helpers/service.js';

// POST /v1/auth/register and POST /v1/auth/login over real HTTP, and what they
// leave in the database.

const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');
const uniqueEmail = (tag = 'user') => `${tag}.${randomBytes(5).toString('hex')}@example.com`;
const PASSWORD = 'correct horse battery';
const ID = /^dev_[0-9a-hjkmnp-tv-z]{26}$/;
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** Every row of every table, as text, to look for a secret anywhere in the database. */
async function dumpDatabase(store: Store): Promise<string> {
  const tables = await store.db.introspection.getTables();
  const dump: Record<string, unknown[]> = {};
  for (const table of tables) {
    const { rows } = await sql`select * from ${sql.table(table.name)}`.execute(store.db);
    dump[table.name] = rows;
  }
  return JSON.stringify(dump);
}

function expectError(reply: { status: number; body: any; headers: Headers }, status: number, code: string) {
  expect(reply.status, JSON.stringify(reply.body)).toBe(status);
  expect(reply.body).toEqual({
    error: expect.objectContaining({ code, message: expect.any(String), request_id: expect.any(String) }),
  });
  expect(reply.body.error.request_id).toBe(reply.headers.get('x-request-id'));
}

describe('register and login', () => {
  let service: TestService;
  let store: Store;
  beforeAll(async () => {
    service = await startTestService();
    // A connection of our own, to see what the service committed.
    store = openStore(loadConfig({ DATABASE_URL: service.databaseUrl, SECRET_KEY: service.secretKey }).database);
  });
  afterAll(async () => {
    await store?.close();
    await service?.destroy();
  });

  describe('POST /v1/auth/register', () => {
    it('creates a free developer with a live and a test key', async () => {
      const email = uniqueEmail();
      const before = Date.now();
      const reply = await call(service.url, 'POST', '/v1/auth/register', { body: { email, password: PASSWORD } });
      expect(reply.status).toBe(201);
      expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
      expect(Object.keys(reply.body).sort()).toEqual(['developer', 'keys']);
      const { developer, keys } = reply.body;
      expect(Object.keys(developer).sort()).toEqual(['created_at', 'email', 'id', 'plan']);
      expect(developer.id).toMatch(ID);
      expect(developer.email).toBe(email);
      expect(developer.plan).toBe('free');
      expect(developer.created_at).toMatch(ISO);
      const created = Date.parse(developer.created_at);
      expect(created).toBeGreaterThanOrEqual(before - 1000);
      expect(created).toBeLessThanOrEqual(Date.now() + 1000);
      expect(Object.keys(keys).sort()).toEqual(['live', 'test']);
      expect(keys.live).toMatch(/^svc_live_[0-9a-f]{48}$/);
      expect(keys.test).toMatch(/^svc_test_[0-9a-f]{48}$/);
      expect(keys.live.slice(9)).not.toBe(keys.test.slice(9));

      // Both keys work at once and belong to this developer.
      for (const [mode, key] of [
        ['live', keys.live],
        ['test', keys.test],
      ]) {
        const me = await call(service.url, 'GET', '/v1/auth/me', { token: key });
        expect(me.status).toBe(200);
        expect(me.body).toMatchObject({ id: developer.id, email, mode });
      }
    });

    it('gives every developer a distinct id and distinct keys', async () => {
      const [a, b] = await Promise.all([registerAccount(service.url), registerAccount(service.url)]);
      expect(a.id).not.toBe(b.id);
      expect(new Set([a.live, a.test, b.live, b.test]).size).toBe(4);
    });

    it('stores the email in lower case, and logs in whatever the case', async () => {
      const tag = randomBytes(4).toString('hex');
      const reply = await call(service.url, 'POST', '/v1/auth/register', {
        body: { email: `Ada.Lovelace+${tag}@Example.COM`, password: PASSWORD },
      });
      expect(reply.status).toBe(201);
      expect(reply.body.developer.email).toBe(`ada.lovelace+${tag}@example.com`);
      const login = await call(service.url, 'POST', '/v1/auth/login', {
        body: { email: `ADA.lovelace+${tag}@example.com`, password: PASSWORD },
      });
      expect(login.status).toBe(200);
      expect(login.body.developer.id).toBe(reply.body.developer.id);
    });

    it('refuses a taken email with 409 email_taken, in any case', async () => {
      const email = uniqueEmail('taken');
      const first = await call(service.url, 'POST', '/v1/auth/register', { body: { email, password: PASSWORD } });
      expect(first.status).toBe(201);
      for (const again of [email, email.toUpperCase(), `${email[0]!.toUpperCase()}${email.slice(1)}`]) {
        const reply = await call(service.url, 'POST', '/v1/auth/register', {
          body: { email: again, password: 'another password 123' },
        });
        expectError(reply, 409, 'email_taken');
        expect(reply.text).not.toMatch(/svc_(live|test)_/);
      }
      // The first account is untouched: its password still works, the other one does not.
      const ok = await call(service.url, 'POST', '/v1/auth/login', { body: { email, password: PASSWORD } });
      expect(ok.status).toBe(200);
      const other = await call(service.url, 'POST', '/v1/auth/login', {
        body: { email, password: 'another password 123' },
      });
      expect(other.status).toBe(401);
    });

    it('lets exactly one of two simultaneous registrations of an email win', async () => {
      const email = uniqueEmail('race');
      const replies = await Promise.all([
        call(service.url, 'POST', '/v1/auth/register', { body: { email, password: PASSWORD } }),
        call(service.url, 'POST', '/v1/auth/register', { body: { email: email.toUpperCase(), password: PASSWORD } }),
      ]);
      expect(replies.map((r) => r.status).sort()).toEqual([201, 409]);
      const loser = replies.find((r) => r.status === 409)!;
      expectError(loser, 409, 'email_taken');
      const rows = await store.db.selectFrom('developers').select('id').where('email', '=', email).execute();
      expect(rows).toHaveLength(1);
    });

    it('accepts passwords of exactly 10 and exactly 128 characters', async () => {
      for (const password of ['p'.repeat(10), 'p'.repeat(128)]) {
        const email = uniqueEmail('len');
        const reply = await call(service.url, 'POST', '/v1/auth/register', { body: { email, password } });
        expect(reply.status).toBe(201);
        const login = await call(service.url, 'POST', '/v1/auth/login', { body: { email, password } });
        expect(login.status).toBe(200);
      }
    });

    const email = 'valid.address@example.com';
    const badBodies: [string, unknown, string][] = [
      ['missing email', { password: PASSWORD }, 'email'],
      ['missing password', { email }, 'password'],
      ['a malformed email', { email: 'not-an-email', password: PASSWORD }, 'email'],
      ['an email with no domain', { email: 'someone@', password: PASSWORD }, 'email'],
      ['an email over 254 characters', { email: `${'a'.repeat(250)}@example.com`, password: PASSWORD }, 'email'],
      ['a password of 9 characters', { email, password: 'p'.repeat(9) }, 'password'],
      ['a password of 129 characters', { email, password: 'p'.repeat(129) }, 'password'],
      ['an unknown extra field', { email, password: PASSWORD, plan: 'scale' }, 'plan'],
      ['a password sent as a number', { email, password: 12345678901234 }, 'password'],
      ['an email sent as a number', { email: 42, password: PASSWORD }, 'email'],
      ['an email sent as null', { email: null, password: PASSWORD }, 'email'],
      ['a password sent as an array', { email, password: [PASSWORD] }, 'password'],
      ['a body that is an array', [email, PASSWORD], 'body'],
      ['a body that is a string', 'email', 'body'],
    ];

    it.each(badBodies)('answers 400 invalid_request naming the field for %s', async (_case, body, field) => {
      const reply = await call(service.url, 'POST', '/v1/auth/register', { body });
      expectError(reply, 400, 'invalid_request');
      expect(reply.body.error.message).toContain(field);
      expect(reply.body.error.details.fields.map((f: { field: string }) => f.field)).toContain(field);
      expect(reply.text).not.toContain(PASSWORD);
    });

    it('creates nothing for a refused body (no plan smuggled in, account still free to register)', async () => {
      const email = uniqueEmail('smuggle');
      const refused = await call(service.url, 'POST', '/v1/auth/register', {
        body: { email, password: PASSWORD, plan: 'scale' },
      });
      expect(refused.status).toBe(400);
      const ok = await call(service.url, 'POST', '/v1/auth/register', { body: { email, password: PASSWORD } });
      expect(ok.status).toBe(201);
      expect(ok.body.developer.plan).toBe('free');
    });

    it('keeps only the SHA-256 of each key, and a scrypt hash of the password', async () => {
      const account = await registerAccount(service.url);
      const keys = await store.db
        .selectFrom('api_keys')
        .selectAll()
        .where('developer_id', '=', account.id)
        .orderBy('mode')
        .execute();
      expect(keys.map((k) => k.mode)).toEqual(['live', 'test']);
      const [live, test] = keys;
      expect(live!.key_hash).toBe(sha256(account.live));
      expect(test!.key_hash).toBe(sha256(account.test));
      expect(live!.prefix).toBe(account.live.slice(0, 15));
      expect(test!.prefix).toBe(account.test.slice(0, 15));

      const developer = await store.db
        .selectFrom('developers')
        .selectAll()
        .where('id', '=', account.id)
        .executeTakeFirstOrThrow();
      expect(developer.email).toBe(account.email);
      expect(developer.plan).toBe('free');
      expect(developer.password_hash.startsWith('scrypt$')).toBe(true);
      expect(developer.password_hash).not.toContain(account.password);

      // No column of any table holds a plaintext key, its secret part, or the password.
      const dump = await dumpDatabase(store);
      expect(dump).toContain(sha256(account.live)); // the dump does see the rows
      for (const secret of [account.live, account.test, account.live.slice(9), account.test.slice(9)]) {
        expect(dump).not.toContain(secret);
      }
      expect(dump).not.toContain(account.password);
    });
  });

  describe('POST /v1/auth/login', () => {
    it('returns the developer, key summaries and a one-hour session', async () => {
      const account = await registerAccount(service.url);
      const before = Date.now();
      const reply = await call(service.url, 'POST', '/v1/auth/login', {
        body: { email: account.email, password: account.password },
      });
      expect(reply.status).toBe(200);
      expect(Object.keys(reply.body).sort()).toEqual(['developer', 'keys', 'session']);
      const { developer, keys, session } = reply.body;
      expect(Object.keys(developer).sort()).toEqual(['created_at', 'email', 'id', 'plan']);
      expect(developer).toMatchObject({ id: account.id, email: account.email, plan: 'free' });
      expect(keys).toEqual([
        { mode: 'live', prefix: account.live.slice(0, 15), created_at: developer.created_at },
        { mode: 'test', prefix: account.test.slice(0, 15), created_at: developer.created_at },
      ]);
      expect(keys[0].prefix).toMatch(/^svc_live_[0-9a-f]{6}$/);
      expect(reply.text).not.toContain(account.live);
      expect(reply.text).not.toContain(account.test);

      expect(Object.keys(session).sort()).toEqual(['expires_at', 'token']);
      expect(session.token).toMatch(/^svc_sess_[0-9a-f]{48}$/);
      expect(session.expires_at).toMatch(ISO);
      const expires = Date.parse(session.expires_at);
      expect(expires).toBeGreaterThanOrEqual(before + 3600_000 - 2000);
      expect(expires).toBeLessThanOrEqual(Date.now() + 3600_000 + 2000);

      const me = await call(service.url, 'GET', '/v1/auth/me', { token: session.token });
      expect(me.status).toBe(200);
      expect(me.body).toMatchObject({ id: account.id, mode: null });

      // The session is stored as its SHA-256 only.
      const row = await store.db
        .selectFrom('sessions')
        .selectAll()
        .where('developer_id', '=', account.id)
        .executeTakeFirstOrThrow();
      expect(row.token_hash).toBe(sha256(session.token));
      expect(row.expires_at).toBe(session.expires_at);
      const dump = await dumpDatabase(store);
      expect(dump).not.toContain(session.token);
      expect(dump).not.toContain(session.token.slice(9));
    });

    it('starts a new, independent session on every login', async () => {
      const account = await registerAccount(service.url);
      const body = { email: account.email, password: account.password };
      const first = await call(service.url, 'POST', '/v1/auth/login', { body });
      const second = await call(service.url, 'POST', '/v1/auth/login', { body });
      expect(first.body.session.token).not.toBe(second.body.session.token);
      for (const reply of [first, second]) {
        const me = await call(service.url, 'GET', '/v1/auth/me', { token: reply.body.session.token });
        expect(me.status).toBe(200);
      }
    });

    it('answers a wrong password and an unknown email with the same 401', async () => {
      const account = await registerAccount(service.url);
      const wrongPassword = await call(service.url, 'POST', '/v1/auth/login', {
        body: { email: account.email, password: 'not the password' },
      });
      const unknownEmail = await call(service.url, 'POST', '/v1/auth/login', {
        body: { email: uniqueEmail('nobody'), password: account.password },
      });
      expectError(wrongPassword, 401, 'unauthorized');
      expectError(unknownEmail, 401, 'unauthorized');
      const { request_id: _a, ...wrong } = wrongPassword.body.error;
      const { request_id: _b, ...unknown } = unknownEmail.body.error;
      expect(wrong).toEqual(unknown);
      expect(wrongPassword.headers.get('www-authenticate')).toBe(unknownEmail.headers.get('www-authenticate'));
      expect(wrongPassword.text).not.toContain('svc_sess_');
      expect(wrongPassword.text).not.toContain(account.id);
    });

    it('does not accept a key as a password, or a password in another case', async () => {
      const account = await registerAccount(service.url);
      for (const password of [account.password.toUpperCase(), `${account.password} `, account.live]) {
        const reply = await call(service.url, 'POST', '/v1/auth/login', { body: { email: account.email, password } });
        expect(reply.status).toBe(401);
      }
    });

    it('validates its body like register does', async () => {
      for (const [body, field] of [
        [{ email: 'someone@example.com' }, 'password'],
        [{ email: 'someone@example.com', password: 1234567890123 }, 'password'],
        [{ email: 'someone@example.com', password: PASSWORD, remember: true }, 'remember'],
        [{ email: 'nope', password: PASSWORD }, 'email'],
      ] as const) {
        const reply = await call(service.url, 'POST', '/v1/auth/login', { body });
        expectError(reply, 400, 'invalid_request');
        expect(reply.body.error.message).toContain(field);
      }
    });
  });
});

describe('auth rate limit (AUTH_RATE_LIMIT=3/60)', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService({ env: { AUTH_RATE_LIMIT: '3/60' } });
  });
  afterAll(() => service?.destroy());

  function expectRateLimited(reply: { status: number; body: any; headers: Headers }) {
    expectError(reply, 429, 'rate_limited');
    const retryAfter = reply.headers.get('retry-after');
    expect(retryAfter).toMatch(/^\d+$/);
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
    expect(Number(retryAfter)).toBeLessThanOrEqual(60);
  }

  it('refuses the 4th login from one address with 429 and Retry-After, even with the right password', async () => {
    const account = await registerAccount(service.url); // register:ip = 1
    const login = (password: string, email = account.email) =>
      call(service.url, 'POST', '/v1/auth/login', { body: { email, password } });
    expect((await login('wrong password 1')).status).toBe(401);
    expect((await login('wrong password 2', account.email.toUpperCase())).status).toBe(401);
    expect((await login(account.password)).status).toBe(200);
    const fourth = await login(account.password);
    expectRateLimited(fourth);
    expect(fourth.text).not.toContain('svc_sess_');
    // The per-IP limit now also stops logins to any other email from this address.
    expectRateLimited(await login(account.password, uniqueEmail('other')));
  });

  it('limits registrations per IP, whatever the email, and ignores X-Forwarded-For without TRUST_PROXY', async () => {
    // One registration was made by the previous test; two more fit in the window.
    for (let i = 0; i < 2; i++) {
      const reply = await call(service.url, 'POST', '/v1/auth/register', {
        body: { email: uniqueEmail('ip'), password: PASSWORD },
        headers: { 'x-forwarded-for': `198.51.100.${i + 1}` },
      });
      expect(reply.status).toBe(201);
    }
    const email = uniqueEmail('ip');
    const refused = await call(service.url, 'POST', '/v1/auth/register', {
      body: { email, password: PASSWORD },
      headers: { 'x-forwarded-for': '198.51.100.99' },
    });
    expectRateLimited(refused);
    // Nothing was created for the refused request.
    const row = await service.store.db.selectFrom('developers').select('id').where('email', '=', email).execute();
    expect(row).toHaveLength(0);
  });
});

describe('auth rate limit behind a trusted proxy, on a controlled clock', () => {
  let service: TestService;
  let now = Date.parse('2031-05-10T12:00:00.000Z');
  beforeAll(async () => {
    service = await startTestService({
      env: { AUTH_RATE_LIMIT: '3/60', TRUST_PROXY: 'true' },
      clock: { now: () => new Date(now) },
    });
  });
  afterAll(() => service?.destroy());

  const from = (ip: string) => ({ 'x-forwarded-for': ip });

  it('backs off logins per email across addresses, and checks the right password when its turn comes', async () => {
    const email = uniqueEmail('window');
    const register = await call(service.url, 'POST', '/v1/auth/register', {
      body: { email, password: PASSWORD },
      headers: from('192.0.2.1'),
    });
    expect(register.status).toBe(201);
    const login = (ip: string, password = PASSWORD, address = email) =>
      call(service.url, 'POST', '/v1/auth/login', { body: { email: address, password }, headers: from(ip) });

    // Three attempts go through at once, then one per 20 s (60 s / 3); a
    // turn more than 10 s away is refused, and the clock stands still here.
    expect((await login('192.0.2.10', 'wrong password 1')).status).toBe(401);
    expect((await login('192.0.2.11', 'wrong password 2', email.toUpperCase())).status).toBe(401);
    expect((await login('192.0.2.12', 'wrong password 3')).status).toBe(401);
    // Even the right password waits for its turn: checking it sooner would tell a guesser it was right.
    const limited = await login('192.0.2.13');
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe('rate_limited');
    expect(limited.headers.get('retry-after')).toBe('20');

    now += 5_000;
    const later = await login('192.0.2.14');
    expect(later.status).toBe(429);
    expect(later.headers.get('retry-after')).toBe('15');

    now += 15_000;
    expect((await login('192.0.2.15')).status).toBe(200);
    // The owner's login resets nothing (that would give guessers three at once
    // again): the next guess still waits for its turn, 20 s on.
    const guess = await login('192.0.2.16', 'wrong password 4');
    expect(guess.status).toBe(429);
    expect(guess.headers.get('retry-after')).toBe('20');
  });

  it('counts registrations per address, so another address is not affected', async () => {
    for (let i = 0; i < 3; i++) {
      const reply = await call(service.url, 'POST', '/v1/auth/register', {
        body: { email: uniqueEmail('per-ip'), password: PASSWORD },
        headers: from('203.0.113.7'),
      });
      expect(reply.status).toBe(201);
    }
    const refused = await call(service.url, 'POST', '/v1/auth/register', {
      body: { email: uniqueEmail('per-ip'), password: PASSWORD },
      headers: from('203.0.113.7'),
    });
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe('rate_limited');
    const elsewhere = await call(service.url, 'POST', '/v1/auth/register', {
      body: { email: uniqueEmail('per-ip'), password: PASSWORD },
      headers: from('203.0.113.8'),
    });
    expect(elsewhere.status).toBe(201);
  });
});
