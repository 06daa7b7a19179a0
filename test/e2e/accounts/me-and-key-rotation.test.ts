import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { installAuthentication, keyHolderOf } from '../../../src/http/auth.js';
import { installErrorHandling } from '../../../src/http/errors.js';
import { type Account, call, registerAccount } from '../../helpers/http.js';
import { startTestService, type TestService } from '../../helpers/service.js';

// GET /v1/auth/me, POST /v1/auth/keys/rotate and the Authorization header, over
// real HTTP. The service runs on a clock the tests can move (session expiry,
// billing periods); by default it follows real time.

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
let fixedNow: Date | undefined;
let offsetMs = 0;
const clock = { now: () => fixedNow ?? new Date(Date.now() + offsetMs) };

type Reply = { status: number; body: any; headers: Headers; text: string };

function expectUnauthorized(reply: Reply) {
  expect(reply.status, reply.text).toBe(401);
  expect(reply.body).toEqual({
    error: { code: 'unauthorized', message: expect.any(String), request_id: expect.any(String) },
  });
  expect(reply.body.error.message.length).toBeGreaterThan(0);
  expect(reply.body.error.request_id).toBe(reply.headers.get('x-request-id'));
}

async function login(service: TestService, account: Account): Promise<string> {
  const reply = await call(service.url, 'POST', '/v1/auth/login', {
    body: { email: account.email, password: account.password },
  });
  expect(reply.status).toBe(200);
  return reply.body.session.token;
}

const me = (service: TestService, token: string, headers?: Record<string, string>) =>
  call(service.url, 'GET', '/v1/auth/me', { token, headers });
const rotate = (service: TestService, token: string, query = '') =>
  call(service.url, 'POST', `/v1/auth/keys/rotate${query}`, { token });

describe('accounts and keys', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService({ clock });
  });
  afterAll(() => service?.destroy());
  afterEach(() => {
    fixedNow = undefined;
    offsetMs = 0;
  });

  describe('GET /v1/auth/me', () => {
    it('describes the account, its usage this month and its keys, in the mode of the key presented', async () => {
      const account = await registerAccount(service.url);
      const live = await me(service, account.live);
      expect(live.status).toBe(200);
      expect(Object.keys(live.body).sort()).toEqual(['created_at', 'email', 'id', 'keys', 'mode', 'plan', 'usage']);
      const now = new Date();
      const periodStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString();
      const periodEnd = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString();
      expect(live.body).toEqual({
        id: account.id,
        email: account.email,
        plan: 'free',
        mode: 'live',
        usage: { period_start: periodStart, period_end: periodEnd, live_pauses_used: 0, live_pauses_quota: 100 },
        keys: [
          { mode: 'live', prefix: account.live.slice(0, 15), created_at: expect.stringMatching(ISO) },
          { mode: 'test', prefix: account.test.slice(0, 15), created_at: expect.stringMatching(ISO) },
        ],
        created_at: expect.stringMatching(ISO),
      });
      expect(live.text).not.toContain(account.live);
      expect(live.text).not.toContain('password');

      const test = await me(service, account.test);
      expect(test.status).toBe(200);
      expect(test.body.mode).toBe('test');
      expect({ ...test.body, mode: 'live' }).toEqual(live.body);

      const session = await me(service, await login(service, account));
      expect(session.status).toBe(200);
      expect(session.body.mode).toBeNull();
      expect({ ...session.body, mode: 'live' }).toEqual(live.body);
    });

    it('reports the calendar month (UTC) as the billing period, across a year end', async () => {
      const account = await registerAccount(service.url);
      fixedNow = new Date('2030-12-31T23:59:59.999Z');
      expect((await me(service, account.live)).body.usage).toMatchObject({
        period_start: '2030-12-01T00:00:00.000Z',
        period_end: '2031-01-01T00:00:00.000Z',
      });
      fixedNow = new Date('2031-01-01T00:00:00.000Z');
      expect((await me(service, account.live)).body.usage).toMatchObject({
        period_start: '2031-01-01T00:00:00.000Z',
        period_end: '2031-02-01T00:00:00.000Z',
      });
      fixedNow = new Date('2032-02-15T08:00:00.000Z');
      expect((await me(service, account.test)).body.usage).toMatchObject({
        period_start: '2032-02-01T00:00:00.000Z',
        period_end: '2032-03-01T00:00:00.000Z',
        live_pauses_used: 0,
      });
    });

    it('answers 401 once the one-hour session has expired, while keys keep working', async () => {
      const account = await registerAccount(service.url);
      const session = await login(service, account);
      offsetMs = 59 * 60_000;
      expect((await me(service, session)).status).toBe(200);
      offsetMs = 60 * 60_000 + 1000;
      expectUnauthorized(await me(service, session));
      expectUnauthorized(await rotate(service, session, '?mode=live'));
      expect((await me(service, account.live)).status).toBe(200);
    });
  });

  describe('POST /v1/auth/keys/rotate', () => {
    it('replaces the key presented: the old one fails at once, the new one and the other mode work', async () => {
      const account = await registerAccount(service.url);
      const before = Date.now();
      const reply = await rotate(service, account.live);
      expect(reply.status).toBe(200);
      expect(Object.keys(reply.body).sort()).toEqual(['created_at', 'key', 'mode', 'prefix']);
      const { key, mode, prefix, created_at } = reply.body;
      expect(key).toMatch(/^svc_live_[0-9a-f]{48}$/);
      expect(key).not.toBe(account.live);
      expect(mode).toBe('live');
      expect(prefix).toBe(key.slice(0, 15));
      expect(created_at).toMatch(ISO);
      expect(Date.parse(created_at)).toBeGreaterThanOrEqual(before - 1000);
      expect(reply.headers.get('cache-control')).toBe('no-store');

      expectUnauthorized(await me(service, account.live));
      expectUnauthorized(await rotate(service, account.live));
      const fresh = await me(service, key);
      expect(fresh.status).toBe(200);
      expect(fresh.body).toMatchObject({ id: account.id, mode: 'live' });
      expect(fresh.body.keys).toEqual([
        { mode: 'live', prefix, created_at },
        { mode: 'test', prefix: account.test.slice(0, 15), created_at: expect.stringMatching(ISO) },
      ]);
      const other = await me(service, account.test);
      expect(other.status).toBe(200);
      expect(other.body.mode).toBe('test');

      // Login lists the new key's prefix too.
      const loggedIn = await call(service.url, 'POST', '/v1/auth/login', {
        body: { email: account.email, password: account.password },
      });
      expect(loggedIn.body.keys.map((k: { prefix: string }) => k.prefix)).toEqual([prefix, account.test.slice(0, 15)]);
    });

    it('rotates a test key as a test key, and the new key can itself be rotated', async () => {
      const account = await registerAccount(service.url);
      const first = await rotate(service, account.test);
      expect(first.status).toBe(200);
      expect(first.body.mode).toBe('test');
      expect(first.body.key).toMatch(/^svc_test_[0-9a-f]{48}$/);
      const second = await rotate(service, first.body.key, '?mode=test');
      expect(second.status).toBe(200);
      expectUnauthorized(await me(service, account.test));
      expectUnauthorized(await me(service, first.body.key));
      expect((await me(service, second.body.key)).body.mode).toBe('test');
      expect((await me(service, account.live)).body.mode).toBe('live');
    });

    it('lets exactly one of two simultaneous rotations with the same key win', async () => {
      for (let round = 0; round < 3; round++) {
        const account = await registerAccount(service.url);
        const replies = await Promise.all([rotate(service, account.live), rotate(service, account.live)]);
        expect(replies.map((r) => r.status).sort()).toEqual([200, 401]);
        const winner = replies.find((r) => r.status === 200)!;
        expectUnauthorized(replies.find((r) => r.status === 401)!);
        expect((await me(service, winner.body.key)).status).toBe(200);
        expectUnauthorized(await me(service, account.live));
        expect((await me(service, account.test)).status).toBe(200);
      }
    });

    it('refuses ?mode= of the other mode with an API key, and changes nothing', async () => {
      const account = await registerAccount(service.url);
      for (const [token, query] of [
        [account.live, '?mode=test'],
        [account.test, '?mode=live'],
      ] as const) {
        const reply = await rotate(service, token, query);
        expect(reply.status).toBe(400);
        expect(reply.body.error.code).toBe('invalid_request');
        expect(reply.text).not.toMatch(/svc_(live|test)_[0-9a-f]{48}/);
      }
      expect((await me(service, account.live)).status).toBe(200);
      expect((await me(service, account.test)).status).toBe(200);
      // The same mode is allowed, and a mode that does not exist is a 400.
      expect((await rotate(service, account.live, '?mode=live')).status).toBe(200);
      const bogus = await rotate(service, account.test, '?mode=prod');
      expect(bogus.status).toBe(400);
      expect(bogus.body.error.code).toBe('invalid_request');
      expect(bogus.body.error.message).toContain('mode');
      expect((await me(service, account.test)).status).toBe(200);
    });

    it('rotates the key of ?mode= with a login session, and needs ?mode= to do so', async () => {
      const account = await registerAccount(service.url);
      const session = await login(service, account);

      const missing = await rotate(service, session);
      expect(missing.status).toBe(400);
      expect(missing.body.error.code).toBe('invalid_request');
      expect(missing.body.error.message).toContain('mode');
      expect((await me(service, account.live)).status).toBe(200);
      expect((await me(service, account.test)).status).toBe(200);

      const live = await rotate(service, session, '?mode=live');
      expect(live.status).toBe(200);
      expect(live.body.mode).toBe('live');
      expect(live.body.key).toMatch(/^svc_live_[0-9a-f]{48}$/);
      expectUnauthorized(await me(service, account.live));
      expect((await me(service, live.body.key)).body).toMatchObject({ id: account.id, mode: 'live' });
      expect((await me(service, account.test)).status).toBe(200);

      const test = await rotate(service, session, '?mode=test');
      expect(test.status).toBe(200);
      expect(test.body.key).toMatch(/^svc_test_[0-9a-f]{48}$/);
      expectUnauthorized(await me(service, account.test));
      expect((await me(service, test.body.key)).body).toMatchObject({ id: account.id, mode: 'test' });
      // The session outlives the rotations.
      expect((await me(service, session)).status).toBe(200);
    });

    it("never lets one developer's key or session reach another developer's account", async () => {
      const [alice, bob] = await Promise.all([registerAccount(service.url), registerAccount(service.url)]);
      const bobBefore = (await me(service, bob.live)).body;

      expect((await me(service, alice.live)).body.id).toBe(alice.id);
      expect((await me(service, alice.test)).body.id).toBe(alice.id);
      const aliceSession = await login(service, alice);
      expect((await me(service, aliceSession)).body.id).toBe(alice.id);

      const rotatedWithKey = await rotate(service, alice.live);
      const rotatedWithSession = await rotate(service, aliceSession, '?mode=test');
      expect(rotatedWithKey.status).toBe(200);
      expect(rotatedWithSession.status).toBe(200);
      expect((await me(service, rotatedWithKey.body.key)).body.id).toBe(alice.id);
      expect((await me(service, rotatedWithSession.body.key)).body.id).toBe(alice.id);

      // Bob's keys and account are exactly as they were.
      const bobAfter = await me(service, bob.live);
      expect(bobAfter.status).toBe(200);
      expect(bobAfter.body).toEqual(bobBefore);
      expect((await me(service, bob.test)).body.id).toBe(bob.id);
    });
  });

  describe('the Authorization header', () => {
    let account: Account;
    beforeAll(async () => {
      account = await registerAccount(service.url);
    });

    const hex = () => randomBytes(24).toString('hex');
    const refused: [string, () => Record<string, string>][] = [
      ['no header', () => ({})],
      ['Basic credentials', () => ({ authorization: `Basic ${Buffer.from('a:b').toString('base64')}` })],
      ['"Basic" with a real key', () => ({ authorization: `Basic ${account.live}` })],
      ['"Bearer" alone', () => ({ authorization: 'Bearer' })],
      ['"Bearer" and spaces', () => ({ authorization: 'Bearer    ' })],
      ['a key without "Bearer"', () => ({ authorization: account.live })],
      ['a malformed key', () => ({ authorization: 'Bearer svc_live_nothex' })],
      ['a key in upper-case hex', () => ({ authorization: `Bearer svc_live_${hex().toUpperCase()}` })],
      ['a key one character short', () => ({ authorization: `Bearer ${account.live.slice(0, -1)}` })],
      ['a key with something after it', () => ({ authorization: `Bearer ${account.live} extra` })],
      ['two keys', () => ({ authorization: `Bearer ${account.live},${account.test}` })],
      ['a well-formed unknown live key', () => ({ authorization: `Bearer svc_live_${hex()}` })],
      ['a well-formed unknown test key', () => ({ authorization: `Bearer svc_test_${hex()}` })],
      ['a well-formed unknown session', () => ({ authorization: `Bearer svc_sess_${hex()}` })],
      ['a live key relabelled as test', () => ({ authorization: `Bearer svc_test_${account.live.slice(9)}` })],
      ['the display prefix', () => ({ authorization: `Bearer ${account.live.slice(0, 15)}` })],
    ];

    it.each(refused)('answers 401 unauthorized to %s', async (_case, headers) => {
      const reply = await call(service.url, 'GET', '/v1/auth/me', { headers: headers() });
      expectUnauthorized(reply);
      expect(reply.headers.get('cache-control')).toBe('no-store');
      const rotated = await call(service.url, 'POST', '/v1/auth/keys/rotate', { headers: headers() });
      expectUnauthorized(rotated);
    });

    it('accepts the scheme in any case and extra spaces around the key', async () => {
      for (const authorization of [
        `bearer ${account.live}`,
        `BEARER ${account.live}`,
        `Bearer   ${account.live}`,
        `Bearer ${account.live}  `,
      ]) {
        const reply = await call(service.url, 'GET', '/v1/auth/me', { headers: { authorization } });
        expect(reply.status, authorization).toBe(200);
        expect(reply.body.id).toBe(account.id);
      }
      // The key is still valid afterwards: refused attempts do not disturb it.
      expect((await me(service, account.live)).status).toBe(200);
    });
  });

  describe('login sessions on key-only routes', () => {
    it('are refused by GET /v1/pause, which takes the API key', async () => {
      const account = await registerAccount(service.url);
      const session = await login(service, account);
      expect((await me(service, session)).status).toBe(200); // the session itself is valid
      expect((await call(service.url, 'GET', '/v1/pause', { token: account.test })).status).toBe(200);
      expectUnauthorized(await call(service.url, 'GET', '/v1/pause', { token: session }));
    });

    it('are refused by every documented key-only operation; only the six documented ones are public', async () => {
      const account = await registerAccount(service.url);
      const session = await login(service, account);
      const document = (await call(service.url, 'GET', '/openapi.json')).body;
      const sessionRoutes = ['POST /v1/auth/keys/rotate', 'GET /v1/auth/me'];
      const publicRoutes = [
        'POST /v1/auth/register',
        'POST /v1/auth/login',
        'GET /v1/respond/{token}',
        'POST /v1/respond/{token}',
        'POST /v1/billing/webhook',
      ];
      let keyOnly = 0;
      for (const [path, operations] of Object.entries<Record<string, any>>(document.paths)) {
        if (!path.startsWith('/v1/')) continue;
        for (const [method, operation] of Object.entries(operations)) {
          const route = `${method.toUpperCase()} ${path}`;
          const security = operation.security ?? document.security;
          if (security.length === 0) {
            expect(publicRoutes, `${route} is documented as public`).toContain(route);
            continue;
          }
          const url = path.replace(/\{[^}]+\}/g, 'x');
          expectUnauthorized(await call(service.url, route.split(' ')[0]!, url));
          if (sessionRoutes.includes(route)) continue;
          expectUnauthorized(await call(service.url, route.split(' ')[0]!, url, { token: session }));
          keyOnly += 1;
        }
      }
      expect(keyOnly).toBeGreaterThan(0);
    });

    describe('on a key-only route mounted with the same authentication', () => {
      let probe: FastifyInstance;
      let probeUrl: string;
      beforeAll(async () => {
        probe = Fastify();
        probe.decorate('services', service.app.services);
        probe.decorate('rateLimits', service.app.rateLimits);
        installErrorHandling(probe);
        probe.addHook('onSend', async (request, reply) => {
          reply.header('x-request-id', request.id);
        });
        await probe.register(
          async (v1) => {
            installAuthentication(v1);
            v1.get('/probe', async (request) => {
              const principal = keyHolderOf(request);
              return { developer: principal.developerId, mode: principal.mode };
            });
            v1.get('/public', { config: { auth: 'none' } }, async (request) => ({ principal: request.principal }));
          },
          { prefix: '/v1' },
        );
        await probe.listen({ port: 0, host: '127.0.0.1' });
        probeUrl = `http://127.0.0.1:${(probe.server.address() as AddressInfo).port}`;
      });
      afterAll(() => probe?.close());

      it('refuses a session with 401 but takes the API keys', async () => {
        const account = await registerAccount(service.url);
        const session = await login(service, account);
        expect((await me(service, session)).status).toBe(200); // the session is valid
        expectUnauthorized(await call(probeUrl, 'GET', '/v1/probe', { token: session }));
        expectUnauthorized(await call(probeUrl, 'GET', '/v1/probe'));
        const live = await call(probeUrl, 'GET', '/v1/probe', { token: account.live });
        expect(live.body).toEqual({ developer: account.id, mode: 'live' });
        const test = await call(probeUrl, 'GET', '/v1/probe', { token: account.test });
        expect(test.body).toEqual({ developer: account.id, mode: 'test' });
        // A route marked public needs nothing.
        expect(await call(probeUrl, 'GET', '/v1/public')).toMatchObject({ status: 200, body: { principal: null } });
      });
    });
  });
});

describe('plan quotas from the configuration', () => {
  it('reports an unlimited free plan as a null quota', async () => {
    const service = await startTestService({ env: { PLAN_QUOTAS: 'free:unlimited,pro:5' } });
    try {
      const account = await registerAccount(service.url);
      const reply = await me(service, account.live);
      expect(reply.status).toBe(200);
      expect(reply.body.plan).toBe('free');
      expect(reply.body.usage.live_pauses_quota).toBeNull();
      expect(reply.body.usage.live_pauses_used).toBe(0);
    } finally {
      await service.destroy();
    }
  });
});
