import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Account, call, registerAccount } from '../../helpers/http.js';
import { createPause, tokenOf } from '../../helpers/pauses.js';
import { startTestService, type TestService } from '../../helpers/service.js';

// What the log must never hold: a key, a password, a session token, an
// Authorization header. And a response token, which lets anyone answer its
// pause: no spelling of a path that carries one may put it in the log, not the
// plain path, not a percent-encoded one the router still matches, not one no
// route matches.

const PASSWORD = 'platform password 1';

let service: TestService;
let alice: Account;

beforeAll(async () => {
  service = await startTestService();
  alice = await registerAccount(service.url);
});
afterAll(() => service?.destroy());

/** A fresh pause's token, and the log lines written while `work` ran. */
async function logsOf(work: (token: string) => Promise<void>) {
  const token = tokenOf(await createPause(service.url, alice.test));
  const first = service.logs.length;
  await work(token);
  // "request completed" is written when the response has been sent; give the
  // last one a moment to land.
  await new Promise((resolve) => setTimeout(resolve, 50));
  const lines = service.logs.slice(first);
  return { token, lines, entries: lines.map((line) => JSON.parse(line)) };
}

function expectNoToken(token: string, lines: string[]) {
  const log = lines.join('');
  const signature = token.slice(token.indexOf('.') + 1);
  expect(log.includes(token), 'the token is in the log').toBe(false);
  expect(log.includes(signature), "the token's signature is in the log").toBe(false);
  expect(log.includes(encodeURIComponent(signature).slice(0, 20)), 'part of the signature is in the log').toBe(false);
}

/** Spells the first character of each named path segment as %XX, as a client may. */
const encodeFirst = (segment: string) => `%${segment.charCodeAt(0).toString(16)}${segment.slice(1)}`;

describe('response tokens in the log', () => {
  it.each([
    ['/r/{token}', (t: string) => `/r/${t}`],
    ['/v1/respond/{token}', (t: string) => `/v1/respond/${t}`],
    ['/%72/{token}', (t: string) => `/${encodeFirst('r')}/${t}`],
    ['/v1/%72espond/{token}', (t: string) => `/v1/${encodeFirst('respond')}/${t}`],
    ['/v%31/respond/{token}', (t: string) => `/v%31/respond/${t}`],
    ['/r/{token, first letter encoded}', (t: string) => `/r/${encodeFirst(t)}`],
    ['/r/{token}?choice=approve', (t: string) => `/r/${t}?choice=approve`],
  ])('a routed %s is served and logged without its token', async (_name, pathOf) => {
    const { token, lines, entries } = await logsOf(async (t) => {
      const page = await call(service.url, 'GET', pathOf(t));
      expect(page.status, page.text).toBe(200);
      if (pathOf(t).includes('respond')) {
        // The API answers the question; POSTing the answer is routed the same way.
        expect(page.body.title).toBe('Ship it?');
        const answer = await call(service.url, 'POST', pathOf(t), { body: { choice: 'approve' } });
        expect(answer.status, answer.text).toBe(200);
      }
    });
    expectNoToken(token, lines);
    // The requests were logged, one line each, under the route they reached.
    const completed = entries.filter((e) => e.msg === 'request completed');
    expect(completed.length).toBe(pathOf(token).includes('respond') ? 2 : 1);
    for (const entry of completed) {
      expect(entry.req.url).toMatch(/^\/(r|v1\/respond)\/\[redacted\](\?choice=approve)?$/);
      expect(entry.res.statusCode).toBe(200);
      expect(entry.responseTime).toBeGreaterThan(0);
    }
    expect(entries.some((e) => e.msg === 'incoming request')).toBe(false);
  });

  it.each([
    ['a trailing segment', (t: string) => `/r/${t}/extra`],
    ['an unknown prefix', (t: string) => `/v1/respond-now/${t}`],
    ['a doubled slash', (t: string) => `/v1//respond/${t}`],
    ['upper case', (t: string) => `/V1/RESPOND/${t}`],
    ['a query string', (t: string) => `/nowhere?token=${t}`],
    ['a token split over segments', (t: string) => `/r/${t.replace('.', './')}`],
  ])('an unmatched path with %s answers 404 and logs no token', async (_name, pathOf) => {
    const { token, lines, entries } = await logsOf(async (t) => {
      const reply = await call(service.url, 'GET', pathOf(t));
      expect(reply.status).toBe(404);
    });
    expectNoToken(token, lines);
    expect(entries.some((e) => e.msg === 'request completed' && e.res.statusCode === 404)).toBe(true);
  });

  it('a path that is not valid percent-encoding answers 400 and logs no token', async () => {
    const { token, lines } = await logsOf(async (t) => {
      const reply = await call(service.url, 'GET', `/r/${t}%zz`);
      expect(reply.status).toBe(400);
      expect(reply.body.error.code).toBe('invalid_request');
    });
    expectNoToken(token, lines);
  });

  it('the other routes are still logged with their path and query', async () => {
    const { entries } = await logsOf(async () => {
      expect((await call(service.url, 'GET', '/v1/pause?limit=1', { token: alice.test })).status).toBe(200);
    });
    expect(entries.some((e) => e.req?.url === '/v1/pause?limit=1')).toBe(true);
  });
});

describe('log secrecy', () => {
  it('never logs a key, a password, a session token or an Authorization header', async () => {
    const email = `secrets.${Date.now()}@example.com`;
    const wrongPassword = 'wrong-password-9f3c1e';
    const basic = Buffer.from(`${email}:${PASSWORD}`).toString('base64');
    const unknownKey = `svc_live_${'5ec2e7'.repeat(8)}`;
    const first = service.logs.length;

    const registered = await call(service.url, 'POST', '/v1/auth/register', { body: { email, password: PASSWORD } });
    expect(registered.status).toBe(201);
    const { live, test } = registered.body.keys as { live: string; test: string };
    const loggedIn = await call(service.url, 'POST', '/v1/auth/login', { body: { email, password: PASSWORD } });
    const session: string = loggedIn.body.session.token;
    expect(
      (await call(service.url, 'POST', '/v1/auth/login', { body: { email, password: wrongPassword } })).status,
    ).toBe(401);
    expect(
      (await call(service.url, 'POST', '/v1/auth/login', { body: { email: `x${email}`, password: wrongPassword } }))
        .status,
    ).toBe(401);
    // A refused body that carries a password.
    expect(
      (await call(service.url, 'POST', '/v1/auth/login', { body: { email, password: PASSWORD, extra: PASSWORD } }))
        .status,
    ).toBe(400);
    expect((await call(service.url, 'GET', '/v1/auth/me', { token: live })).status).toBe(200);
    expect((await call(service.url, 'GET', '/v1/auth/me', { token: session })).status).toBe(200);
    const rotated = await call(service.url, 'POST', '/v1/auth/keys/rotate', { token: live });
    expect(rotated.status).toBe(200);
    const rotatedBySession = await call(service.url, 'POST', '/v1/auth/keys/rotate?mode=test', { token: session });
    expect(rotatedBySession.status).toBe(200);
    expect((await call(service.url, 'GET', '/v1/auth/me', { token: live })).status).toBe(401); // the old key
    expect((await call(service.url, 'GET', '/v1/auth/me', { token: unknownKey })).status).toBe(401);
    expect(
      (await call(service.url, 'GET', '/v1/auth/me', { headers: { authorization: `Basic ${basic}` } })).status,
    ).toBe(401);

    const lines = service.logs.slice(first);
    // The log did capture these requests, so its silence about secrets means something.
    const entries = lines.map((line) => JSON.parse(line));
    expect(entries.filter((e) => e.req?.url === '/v1/auth/login').length).toBeGreaterThanOrEqual(4);
    expect(entries.some((e) => e.req?.url === '/v1/auth/keys/rotate?mode=test')).toBe(true);

    const log = lines.join('');
    const secrets = {
      live,
      test,
      newLive: rotated.body.key,
      newTest: rotatedBySession.body.key,
      session,
      password: PASSWORD,
      wrongPassword,
      basic,
      unknownKey,
    };
    for (const [name, secret] of Object.entries(secrets)) {
      expect(log.includes(secret), `${name} is in the log`).toBe(false);
      // Not even the random part after the display prefix.
      expect(log.includes(secret.slice(15)), `part of ${name} is in the log`).toBe(false);
    }
    expect(log).not.toMatch(/svc_(live|test|sess)_[0-9a-f]{7,}/);
    expect(log).not.toMatch(/bearer|basic /i);
    for (const entry of entries) {
      expect(JSON.stringify(entry.req?.headers ?? {})).not.toMatch(/authorization/i);
      expect(entry.headers?.authorization ?? '[redacted]').toBe('[redacted]');
    }
  });
});
