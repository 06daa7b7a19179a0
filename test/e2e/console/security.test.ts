import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Clock } from '../../../src/domain/clock.js';
import { ConsoleClient, csrfIn } from '../../helpers/console.js';
import { freshDatabase } from '../../helpers/database.js';
import { type Account, call, registerAccount } from '../../helpers/http.js';
import { createPause } from '../../helpers/pauses.js';
import { startTestService, type TestService } from '../../helpers/service.js';

// The console's security rules over real HTTP: the session cookie's flags,
// CSRF on every state-changing form, another developer's pause, rotation at
// sign-in, sign-out, a restart, and the headers of every page.

let service: TestService;
let alice: Account;
let bob: Account;

beforeAll(async () => {
  service = await startTestService();
  [alice, bob] = await Promise.all([registerAccount(service.url), registerAccount(service.url)]);
});

afterAll(async () => {
  await service?.destroy();
});

const statusOf = async (key: string, id: string) =>
  (await call(service.url, 'GET', `/v1/pause/${id}`, { token: key })).body.status;

describe('the session cookie', () => {
  it('is HttpOnly and SameSite=Lax, without Secure or __Host- on http', async () => {
    const reply = await new ConsoleClient(service.url).signIn(alice.email, alice.password);
    const cookie = reply.headers.get('set-cookie')!;
    expect(cookie).toMatch(/^pausepoint_console=svc_console_[0-9a-f]{48}; Path=\/; HttpOnly; SameSite=Lax$/);
  });

  it('is Secure and __Host- prefixed when PUBLIC_BASE_URL is https', async () => {
    const https = await startTestService({ env: { PUBLIC_BASE_URL: 'https://console.example.test' } });
    try {
      const carol = await registerAccount(https.url);
      const client = new ConsoleClient(https.url);
      const reply = await client.signIn(carol.email, carol.password);
      expect(reply.headers.get('set-cookie')).toMatch(
        /^__Host-pausepoint_console=svc_console_[0-9a-f]{48}; Path=\/; HttpOnly; SameSite=Lax; Secure$/,
      );
      expect((await client.get('/console/pauses')).status).toBe(200);
      // The plain name means nothing there.
      const plain = new ConsoleClient(https.url);
      plain.cookie = client.cookie!.replace('__Host-', '');
      expect((await plain.get('/console/pauses')).location).toBe('/console/sign-in');
    } finally {
      await https.destroy();
    }
  });

  it('is not a Bearer credential for the API', async () => {
    const client = new ConsoleClient(service.url);
    await client.signIn(alice.email, alice.password);
    const token = client.cookie!.split('=')[1]!;
    expect((await call(service.url, 'GET', '/v1/auth/me', { token })).status).toBe(401);
  });
});

describe('pages', () => {
  it('carry the security headers, and need a session', async () => {
    const anonymous = new ConsoleClient(service.url);
    const signIn = await anonymous.get('/console/sign-in');
    expect(signIn.status).toBe(200);
    expect(signIn.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(signIn.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(signIn.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(signIn.headers.get('content-security-policy')).toContain("form-action 'self'");
    expect(signIn.headers.get('x-frame-options')).toBe('DENY');
    expect(signIn.headers.get('referrer-policy')).toBe('same-origin');
    expect(signIn.headers.get('cache-control')).toBe('no-store');
    expect((await anonymous.get('/console/pauses')).location).toBe('/console/sign-in');
    expect((await anonymous.get('/console')).location).toBe('/console/sign-in');

    const client = new ConsoleClient(service.url);
    await client.signIn(alice.email, alice.password);
    const pauses = await client.get('/console/pauses');
    expect(pauses.status).toBe(200);
    expect(pauses.headers.get('cache-control')).toBe('no-store');
    expect(pauses.headers.get('x-frame-options')).toBe('DENY');
    expect((await client.get('/console')).location).toBe('/console/pauses');
  });

  it('escape what the developer wrote', async () => {
    const pause = await createPause(service.url, alice.live, { title: '<script>alert(1)</script> & "ok"' });
    const client = new ConsoleClient(service.url);
    await client.signIn(alice.email, alice.password);
    for (const path of ['/console/pauses', `/console/pauses/${pause.id}`]) {
      const page = await client.get(path);
      expect(page.text).not.toContain('<script>alert(1)');
      expect(page.text).toContain('&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;ok&quot;');
    }
  });

  it('stay under 60 KB with their CSS and script', async () => {
    const pause = await createPause(service.url, alice.live, { body: 'x'.repeat(2000) });
    const client = new ConsoleClient(service.url);
    await client.signIn(alice.email, alice.password);
    const css = (await client.get('/console/assets/console.css')).text.length;
    const js = (await client.get('/console/assets/console.js')).text.length;
    for (const path of ['/console/sign-in', '/console/sign-up', '/console/pauses', `/console/pauses/${pause.id}`]) {
      const page = await client.get(path);
      expect(Buffer.byteLength(page.text) + css + js, path).toBeLessThan(60 * 1024);
    }
  });
});

describe('CSRF', () => {
  it('refuses a cancel without the token, with a wrong one, or from another site, and changes nothing', async () => {
    const pause = await createPause(service.url, alice.live);
    const client = new ConsoleClient(service.url);
    await client.signIn(alice.email, alice.password);
    const csrf = await client.csrf(`/console/pauses/${pause.id}/cancel`);
    const path = `/console/pauses/${pause.id}/cancel`;

    expect((await client.post(path, {})).status).toBe(403);
    expect((await client.post(path, { csrf: `${csrf.slice(0, -2)}AA` })).status).toBe(403);
    expect((await client.post(path, { csrf: [csrf, csrf].join('') })).status).toBe(403);
    // Another session's token is not this one's.
    const other = new ConsoleClient(service.url);
    await other.signIn(alice.email, alice.password);
    expect((await client.post(path, { csrf: await other.csrf() })).status).toBe(403);
    // The right token, but a browser says the form came from another site.
    expect((await client.post(path, { csrf }, { origin: 'https://evil.example' })).status).toBe(403);
    expect((await client.post(path, { csrf }, { 'sec-fetch-site': 'cross-site' })).status).toBe(403);
    // No session at all.
    expect((await new ConsoleClient(service.url).post(path, { csrf })).status).toBe(403);
    expect(await statusOf(alice.live, pause.id)).toBe('pending');

    const done = await client.post(path, { csrf }, { origin: service.url, 'sec-fetch-site': 'same-origin' });
    expect(done.status).toBe(303);
    expect(done.location).toBe(`/console/pauses/${pause.id}?cancelled=1`);
    expect(await statusOf(alice.live, pause.id)).toBe('cancelled');
  });

  it('refuses a sign-out without the token, and the session goes on', async () => {
    const client = new ConsoleClient(service.url);
    await client.signIn(alice.email, alice.password);
    const cookie = client.cookie;
    expect((await client.post('/console/sign-out', {})).status).toBe(403);
    expect(client.cookie).toBe(cookie);
    expect((await client.get('/console/pauses')).status).toBe(200);
  });

  it('refuses a cross-site sign-in', async () => {
    const client = new ConsoleClient(service.url);
    const reply = await client.post(
      '/console/sign-in',
      { email: alice.email, password: alice.password },
      { origin: 'https://evil.example' },
    );
    expect(reply.status).toBe(403);
    expect(client.cookie).toBeUndefined();
  });
});

describe("another developer's pause", () => {
  it('is not found, to read or to cancel, and stays pending', async () => {
    const pause = await createPause(service.url, alice.live);
    const client = new ConsoleClient(service.url);
    await client.signIn(bob.email, bob.password);
    expect((await client.get(`/console/pauses/${pause.id}`)).status).toBe(404);
    expect((await client.get(`/console/pauses/${pause.id}?mode=test`)).status).toBe(404);
    expect((await client.get(`/console/pauses/${pause.id}/cancel`)).status).toBe(404);
    const csrf = await client.csrf();
    expect((await client.post(`/console/pauses/${pause.id}/cancel`, { csrf })).status).toBe(404);
    expect(await statusOf(alice.live, pause.id)).toBe('pending');
    expect((await client.get('/console/pauses')).text).not.toContain(pause.id);
  });
});

describe('sessions', () => {
  it('are rotated at sign-in: the old cookie stops working', async () => {
    const client = new ConsoleClient(service.url);
    await client.signIn(alice.email, alice.password);
    const first = client.cookie!;
    await client.signIn(alice.email, alice.password);
    expect(client.cookie).not.toBe(first);
    expect((await client.get('/console/pauses')).status).toBe(200);
    const stale = new ConsoleClient(service.url);
    stale.cookie = first;
    expect((await stale.get('/console/pauses')).location).toBe('/console/sign-in');
  });

  it('end at sign-out, for whoever holds the cookie', async () => {
    const client = new ConsoleClient(service.url);
    await client.signIn(alice.email, alice.password);
    const held = client.cookie!;
    const out = await client.post('/console/sign-out', { csrf: await client.csrf() });
    expect(out.status).toBe(303);
    expect(out.location).toBe('/console/sign-in?signed-out=1');
    expect(out.headers.get('set-cookie')).toMatch(/^pausepoint_console=; Max-Age=0;/);
    const copy = new ConsoleClient(service.url);
    copy.cookie = held;
    expect((await copy.get('/console/pauses')).location).toBe('/console/sign-in');
  });

  it('refuse a wrong password, and sign up makes an account the API knows', async () => {
    const client = new ConsoleClient(service.url);
    const wrong = await client.post('/console/sign-in', { email: alice.email, password: 'not the password' });
    expect(wrong.status).toBe(401);
    expect(wrong.text).toContain('The email or password is wrong.');
    expect(client.cookie).toBeUndefined();

    const email = `console.${Date.now()}@example.com`;
    const short = await client.post('/console/sign-up', { email, password: 'short' });
    expect(short.status).toBe(400);
    expect(short.text).toContain('The password must be 10 to 128 characters long.');
    const made = await client.post('/console/sign-up', { email, password: 'a long enough password' });
    expect(made.status).toBe(201);
    expect(made.text).toMatch(/svc_live_[0-9a-f]{48}/);
    expect(client.cookie).toBeDefined();
    expect((await client.get('/console/pauses')).status).toBe(200);
    const login = await call(service.url, 'POST', '/v1/auth/login', {
      body: { email, password: 'a long enough password' },
    });
    expect(login.status).toBe(200);
    const again = await new ConsoleClient(service.url).post('/console/sign-up', { email, password: 'x'.repeat(12) });
    expect(again.status).toBe(409);
  });

  it('survive a restart of the service over the same database', async () => {
    const database = await freshDatabase();
    const secretKey = service.secretKey;
    let first: TestService | undefined = await startTestService({ database, env: { SECRET_KEY: secretKey } });
    let second: TestService | undefined;
    try {
      const dave = await registerAccount(first.url);
      const client = new ConsoleClient(first.url);
      await client.signIn(dave.email, dave.password);
      const csrf = csrfIn((await client.get('/console/pauses')).text);
      await first.destroy();
      first = undefined;
      second = await startTestService({ database, env: { SECRET_KEY: secretKey } });
      const after = new ConsoleClient(second.url);
      after.cookie = client.cookie;
      const page = await after.get('/console/pauses');
      expect(page.status).toBe(200);
      expect(page.text).toContain(dave.email);
      expect(csrfIn(page.text)).toBe(csrf);
    } finally {
      await first?.destroy();
      await second?.destroy();
      await database.drop();
    }
  });
});

describe('idle expiry', () => {
  it('ends a session 12 h after its last use, and moves that on at most once a minute', async () => {
    let now = Date.parse('2026-03-02T09:00:00.000Z');
    const clock: Clock = { now: () => new Date(now) };
    const timed = await startTestService({ clock });
    try {
      const erin = await registerAccount(timed.url);
      const client = new ConsoleClient(timed.url);
      await client.signIn(erin.email, erin.password);
      const lastUsed = async () =>
        (
          await timed.store.db
            .selectFrom('console_sessions')
            .select(['last_used_at', 'expires_at', 'token_hash'])
            .where('developer_id', '=', erin.id)
            .executeTakeFirstOrThrow()
        ).last_used_at;
      expect(await lastUsed()).toBe('2026-03-02T09:00:00.000Z');
      // Only the hash is stored.
      const stored = await timed.store.db
        .selectFrom('console_sessions')
        .select('token_hash')
        .where('developer_id', '=', erin.id)
        .executeTakeFirstOrThrow();
      expect(client.cookie).not.toContain(stored.token_hash);

      now += 30_000;
      expect((await client.get('/console/pauses')).status).toBe(200);
      expect(await lastUsed()).toBe('2026-03-02T09:00:00.000Z');
      now += 31_000;
      expect((await client.get('/console/pauses')).status).toBe(200);
      expect(await lastUsed()).toBe('2026-03-02T09:01:01.000Z');

      // Used again just before each 12 h runs out: it goes on.
      now += 12 * 3600_000 - 1000;
      expect((await client.get('/console/pauses')).status).toBe(200);
      now += 12 * 3600_000 - 1000;
      expect((await client.get('/console/pauses')).status).toBe(200);
      // Then left alone for 12 h: it has ended.
      now += 12 * 3600_000;
      expect((await client.get('/console/pauses')).location).toBe('/console/sign-in');
    } finally {
      await timed.destroy();
    }
  });
});

describe('sign-in guesses', () => {
  it('share the per-account back-off with the API login', async () => {
    const limited = await startTestService({ env: { AUTH_RATE_LIMIT: '3/60', TRUST_PROXY: 'true' } });
    try {
      const frank = await registerAccount(limited.url);
      for (let i = 0; i < 3; i++) {
        const guess = await call(limited.url, 'POST', '/v1/auth/login', {
          body: { email: frank.email, password: `wrong guess ${i}` },
          // Each from its own address, so only the per-account back-off counts them.
          headers: { 'x-forwarded-for': `203.0.113.${i + 1}` },
        });
        expect(guess.status).toBe(401);
      }
      const client = new ConsoleClient(limited.url);
      const refused = await client.post(
        '/console/sign-in',
        { email: frank.email, password: frank.password },
        { 'x-forwarded-for': '203.0.113.9' },
      );
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(refused.text).toContain('Too many login attempts for this account');
      expect(client.cookie).toBeUndefined();
    } finally {
      await limited.destroy();
    }
  });
});
