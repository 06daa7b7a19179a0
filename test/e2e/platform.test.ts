import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BODY_LIMIT_BYTES } from '../../src/app.js';
import { testEngine } from '../helpers/database.js';
import { expectError, expectNoInternals, expectOnlyDocumentedErrorFields, REQUEST_ID } from '../helpers/errors.js';
import { call, registerAccount } from '../helpers/http.js';
import { createPause, tokenOf } from '../helpers/pauses.js';
import { startTestService, type TestService } from '../helpers/service.js';

// What every endpoint shares: errors, body handling, request ids, health, the
// API reference, and what reaches the log.

const PASSWORD = 'platform password 1';
const JSON_TYPE = { 'content-type': 'application/json' };

describe('platform', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService();
  });
  afterAll(() => service?.destroy());

  describe('unknown routes', () => {
    it.each([
      ['GET', '/nope'],
      ['GET', '/v1/nope'],
      ['POST', '/v1/auth/nope'],
      ['GET', '/v1/auth/register'],
      ['DELETE', '/v1/auth/me'],
      ['GET', '/v2/auth/me'],
    ])('%s %s is 404 not_found with the error body, key or not', async (method, path) => {
      const reply = await call(service.url, method, path);
      expectError(reply, 404, 'not_found');
      expect(reply.body.error.message).toContain(path);
      const withKey = await call(service.url, method, path, { token: `svc_live_${'0'.repeat(48)}` });
      expectError(withKey, 404, 'not_found');
    });

    it('does not echo the query string of an unknown route', async () => {
      const reply = await call(service.url, 'GET', '/v1/nope?token=s3cr3t-value');
      expectError(reply, 404, 'not_found');
      expect(reply.text).not.toContain('s3cr3t-value');
    });
  });

  describe('paths Fastify refuses before routing', () => {
    it.each([
      ['GET', '/v1/pause/%E0%A4%A'],
      ['DELETE', '/v1/pause/%zz'],
      ['POST', '/v1/respond/%'],
      ['GET', '/r/%ff%'],
      ['GET', '/nope/%E0%A4%A'],
    ])('%s %s (bad percent-encoding) is 400 invalid_request with the error body and headers', async (method, path) => {
      const reply = await call(service.url, method, path, { token: `svc_test_${'0'.repeat(48)}` });
      expectError(reply, 400, 'invalid_request');
      expect(reply.headers.get('cache-control')).toBe('no-store');
      expect(reply.headers.get('x-content-type-options')).toBe('nosniff');
    });

    it.each([
      ['GET', `/v1/pause/${'x'.repeat(513)}`],
      ['POST', `/v1/respond/${'x'.repeat(600)}`],
      ['GET', `/r/${'é'.repeat(600)}`],
    ])('%s with a path segment over 512 characters is 404 not_found with the error body', async (method, path) => {
      const reply = await call(service.url, method, path, { token: `svc_test_${'0'.repeat(48)}` });
      expectError(reply, 404, 'not_found');
      expect(reply.headers.get('cache-control')).toBe('no-store');
    });
  });

  describe('request bodies', () => {
    it.each([
      ['broken JSON', '{"email": "a@example.com", "password": '],
      ['a trailing comma', '{"email": "a@example.com",}'],
      ['single quotes', "{'email': 'a@example.com'}"],
      ['a __proto__ key', '{"__proto__": {"admin": true}, "email": "a@example.com", "password": "0123456789"}'],
      ['a constructor.prototype key', '{"constructor": {"prototype": {"admin": true}}}'],
    ])('answers 400 invalid_request to %s', async (_case, rawBody) => {
      const reply = await call(service.url, 'POST', '/v1/auth/register', { rawBody, headers: JSON_TYPE });
      expectError(reply, 400, 'invalid_request');
      expect(({} as Record<string, unknown>).admin).toBeUndefined();
    });

    it('answers 400 to an empty JSON body', async () => {
      const reply = await call(service.url, 'POST', '/v1/auth/login', { rawBody: '', headers: JSON_TYPE });
      expectError(reply, 400, 'invalid_request');
    });

    it('reads a body of exactly 1 MiB and refuses one byte more with 413 payload_too_large', async () => {
      expect(BODY_LIMIT_BYTES).toBe(1024 * 1024);
      // A well-formed body of exactly the limit: read, then refused for its content.
      const prefix = '{"email":"big@example.com","password":"';
      const suffix = '"}';
      const exact = prefix + 'p'.repeat(BODY_LIMIT_BYTES - prefix.length - suffix.length) + suffix;
      expect(Buffer.byteLength(exact)).toBe(BODY_LIMIT_BYTES);
      const atLimit = await call(service.url, 'POST', '/v1/auth/login', { rawBody: exact, headers: JSON_TYPE });
      expectError(atLimit, 400, 'invalid_request');
      expect(atLimit.body.error.message).toContain('password');

      const over = `${exact} `;
      const tooLarge = await call(service.url, 'POST', '/v1/auth/login', { rawBody: over, headers: JSON_TYPE });
      expectError(tooLarge, 413, 'payload_too_large');
    });

    it('refuses an oversized body sent without Content-Length (chunked)', async () => {
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      let sent = 0;
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent > BODY_LIMIT_BYTES + chunk.length) return controller.close();
          sent += chunk.length;
          controller.enqueue(chunk);
        },
      });
      const response = await fetch(`${service.url}/v1/auth/login`, {
        method: 'POST',
        body,
        headers: JSON_TYPE,
        duplex: 'half',
      } as RequestInit);
      const text = await response.text();
      expectError(
        { status: response.status, headers: response.headers, body: JSON.parse(text), text },
        413,
        'payload_too_large',
      );
    });

    it.each([
      ['text/plain', '{"email":"a@example.com","password":"0123456789"}'],
      ['text/plain; charset=utf-8', '{"email":"a@example.com","password":"0123456789"}'],
      ['application/xml', '<login/>'],
      ['application/x-www-form-urlencoded', 'email=a%40example.com&password=0123456789'],
      ['multipart/form-data; boundary=x', '--x\r\nContent-Disposition: form-data; name="email"\r\n\r\na\r\n--x--'],
      ['application/vnd.api+json', '{"email":"a@example.com","password":"0123456789"}'],
    ])('answers 415 unsupported_media_type to a %s body on a JSON route', async (type, rawBody) => {
      for (const path of ['/v1/auth/register', '/v1/auth/login']) {
        const reply = await call(service.url, 'POST', path, { rawBody, headers: { 'content-type': type } });
        expectError(reply, 415, 'unsupported_media_type');
      }
    });

    it('accepts JSON with a charset parameter or in another case', async () => {
      const account = await registerAccount(service.url);
      const rawBody = JSON.stringify({ email: account.email, password: account.password });
      for (const type of ['application/json; charset=utf-8', 'Application/JSON']) {
        const reply = await call(service.url, 'POST', '/v1/auth/login', { rawBody, headers: { 'content-type': type } });
        expect(reply.status, type).toBe(200);
      }
    });
  });

  describe('request ids', () => {
    it('gives every response its own x-request-id, the same as the error body names', async () => {
      const replies = await Promise.all([
        call(service.url, 'GET', '/health'),
        call(service.url, 'GET', '/health'),
        call(service.url, 'GET', '/v1/auth/me'),
        call(service.url, 'POST', '/v1/auth/login', { body: { email: 'x@example.com' } }),
        call(service.url, 'GET', '/openapi.json'),
      ]);
      const ids = replies.map((r) => r.headers.get('x-request-id'));
      for (const id of ids) expect(id).toMatch(REQUEST_ID);
      expect(new Set(ids).size).toBe(ids.length);
      expectError(replies[2]!, 401, 'unauthorized');
      expectError(replies[3]!, 400, 'invalid_request');
    });

    it('does not take a request id from the client', async () => {
      const reply = await call(service.url, 'GET', '/v1/auth/me', { headers: { 'x-request-id': 'client-chosen' } });
      expectError(reply, 401, 'unauthorized');
      expect(reply.text).not.toContain('client-chosen');
      expect(reply.headers.get('x-request-id')).not.toBe('client-chosen');
    });
  });

  describe('headers of /v1 responses', () => {
    it('marks every /v1 answer, success or error, as not to be cached', async () => {
      const email = `cache.${Date.now()}@example.com`;
      const replies = [
        await call(service.url, 'POST', '/v1/auth/register', { body: { email, password: PASSWORD } }),
        await call(service.url, 'POST', '/v1/auth/register', { body: { email, password: PASSWORD } }),
        await call(service.url, 'POST', '/v1/auth/login', { body: { email, password: PASSWORD } }),
        await call(service.url, 'POST', '/v1/auth/login', { body: { email, password: 'wrong password' } }),
        await call(service.url, 'POST', '/v1/auth/login', { body: { email } }),
        await call(service.url, 'POST', '/v1/auth/login', { rawBody: 'x', headers: { 'content-type': 'text/plain' } }),
        await call(service.url, 'GET', '/v1/auth/me'),
      ];
      const [registered, , loggedIn] = replies;
      replies.push(await call(service.url, 'GET', '/v1/auth/me', { token: registered!.body.keys.test }));
      replies.push(await call(service.url, 'GET', '/v1/auth/me', { token: loggedIn!.body.session.token }));
      replies.push(await call(service.url, 'POST', '/v1/auth/keys/rotate', { token: registered!.body.keys.live }));
      expect(replies.map((r) => r.status)).toEqual([201, 409, 200, 401, 400, 415, 401, 200, 200, 200]);
      for (const reply of replies) {
        expect(reply.headers.get('cache-control')).toBe('no-store');
        expect(reply.headers.get('x-content-type-options')).toBe('nosniff');
      }
    });
  });

  describe('GET /health', () => {
    it('answers 200 {status: ok, database: ok} without a key, and ignores a bad one', async () => {
      for (const headers of [{}, { authorization: 'Bearer nonsense' }] as Record<string, string>[]) {
        const reply = await call(service.url, 'GET', '/health', { headers });
        expect(reply.status).toBe(200);
        expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
        expect(reply.body).toEqual({ status: 'ok', database: 'ok' });
      }
    });

    it('is not under /v1', async () => {
      expectError(await call(service.url, 'GET', '/v1/health'), 404, 'not_found');
    });
  });

  describe('API reference', () => {
    it('serves an OpenAPI 3 document of the API at /openapi.json', async () => {
      const reply = await call(service.url, 'GET', '/openapi.json');
      expect(reply.status).toBe(200);
      expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
      const document = reply.body;
      expect(document.openapi).toMatch(/^3\.\d+\.\d+$/);
      expect(document.info).toMatchObject({ title: expect.any(String), version: expect.any(String) });
      expect(document.components.securitySchemes).toEqual({ apiKey: { type: 'http', scheme: 'bearer' } });

      const paths = document.paths as Record<string, Record<string, any>>;
      for (const [path, method] of [
        ['/v1/auth/register', 'post'],
        ['/v1/auth/login', 'post'],
        ['/v1/auth/me', 'get'],
        ['/v1/auth/keys/rotate', 'post'],
        ['/health', 'get'],
      ] as const) {
        expect(paths[path]?.[method], `${method} ${path}`).toBeDefined();
      }
      // Every operation is well formed: responses keyed by status, each with a description.
      for (const [path, operations] of Object.entries(paths)) {
        expect(path.startsWith('/')).toBe(true);
        expect(path === '/health' || path.startsWith('/v1/')).toBe(true);
        for (const [method, operation] of Object.entries(operations)) {
          expect(['get', 'put', 'post', 'delete', 'patch', 'head', 'options']).toContain(method);
          expect(Object.keys(operation.responses).length).toBeGreaterThan(0);
          for (const [status, response] of Object.entries<any>(operation.responses)) {
            expect(status).toMatch(/^([1-5]\d\d|[1-5]XX|default)$/);
            expect(typeof response.description).toBe('string');
          }
        }
      }
      // The document tells the truth about what needs a key.
      expect(paths['/v1/auth/register']!.post.security).toEqual([]);
      expect(paths['/v1/auth/login']!.post.security).toEqual([]);
      expect(paths['/v1/auth/me']!.get.security ?? document.security).toEqual([{ apiKey: [] }]);
      expect(paths['/v1/auth/keys/rotate']!.post.security ?? document.security).toEqual([{ apiKey: [] }]);
      // Register documents its body and its answers.
      const register = paths['/v1/auth/register']!.post;
      const bodySchema = register.requestBody.content['application/json'].schema;
      expect(bodySchema.required.sort()).toEqual(['email', 'password']);
      expect(bodySchema.additionalProperties).toBe(false);
      expect(Object.keys(register.responses)).toEqual(expect.arrayContaining(['201', '400', '409', '429']));
      // Pages for people are not API operations.
      expect(paths['/openapi.json']).toBeUndefined();
      expect(Object.keys(paths).some((path) => path.startsWith('/docs'))).toBe(false);
    });

    it('serves the reference page at /docs, rendering /openapi.json', async () => {
      const page = await call(service.url, 'GET', '/docs');
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      expect(page.text).toMatch(/<html/i);
      expect(page.text).toContain('data-spec-url="/openapi.json"');
      // The page in Chromium: test/e2e/api-reference.test.ts.
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

  describe('error bodies', () => {
    it('never carry a stack trace or internal detail', async () => {
      const owner = await registerAccount(service.url);
      const cancelled = await createPause(service.url, owner.test);
      await call(service.url, 'DELETE', `/v1/pause/${cancelled.id}`, { token: owner.test });
      const errorReplies = [
        await call(service.url, 'GET', '/v1/pause/%zz', { token: owner.test }),
        await call(service.url, 'POST', '/v1/auth/login', { rawBody: '{"email": ', headers: JSON_TYPE }),
        await call(service.url, 'POST', '/v1/pause', { token: owner.test, body: { title: '', colour: 'red' } }),
        await call(service.url, 'GET', '/v1/auth/me', { token: `svc_live_${'0'.repeat(48)}` }),
        await call(service.url, 'GET', '/v1/nope'),
        await call(service.url, 'GET', `/v1/pause/pause_${'0'.repeat(26)}`, { token: owner.test }),
        await call(service.url, 'POST', '/v1/auth/register', { body: { email: owner.email, password: PASSWORD } }),
        await call(service.url, 'DELETE', `/v1/pause/${cancelled.id}`, { token: owner.test }),
        await call(service.url, 'POST', `/v1/respond/${tokenOf(cancelled)}`, { body: { choice: 'approve' } }),
        await call(service.url, 'POST', '/v1/auth/login', {
          rawBody: 'x'.repeat(BODY_LIMIT_BYTES + 1),
          headers: JSON_TYPE,
        }),
        await call(service.url, 'POST', '/v1/auth/login', { rawBody: 'x', headers: { 'content-type': 'text/plain' } }),
      ];
      expect(errorReplies.map((r) => r.status)).toEqual([400, 400, 400, 401, 404, 404, 409, 409, 410, 413, 415]);
      for (const reply of errorReplies) expectOnlyDocumentedErrorFields(reply);
    });
  });
});

describe('when the database goes away', () => {
  let service: TestService;
  let account: { live: string };
  beforeAll(async () => {
    service = await startTestService();
    account = await registerAccount(service.url);
  });
  afterAll(() => service?.destroy());

  it('answers /health with 503 unavailable, and other requests with a bare 500', async () => {
    expect((await call(service.url, 'GET', '/health')).status).toBe(200);
    if (testEngine === 'postgres') {
      await withAdmin((client) => client.query(`drop database ${databaseName(service)} with (force)`));
    } else {
      await service.store.close();
    }

    const health = await call(service.url, 'GET', '/health');
    expect(health.status).toBe(503);
    expect(health.body).toEqual({ status: 'unavailable', database: 'unreachable' });
    expectNoInternals(health);
    expect(service.logs.some((line) => line.includes('health check: database unreachable'))).toBe(true);

    const me = await call(service.url, 'GET', '/v1/auth/me', { token: account.live });
    expectError(me, 500, 'internal_error');
    expectNoInternals(me);
    const login = await call(service.url, 'POST', '/v1/auth/login', {
      body: { email: 'someone@example.com', password: PASSWORD },
    });
    expectError(login, 500, 'internal_error');
    expectNoInternals(login);
    // The cause is in the log, under the request's id.
    const logged = service.logs
      .map((line) => JSON.parse(line))
      .find((e) => e.reqId === me.body.error.request_id && e.err);
    expect(logged).toMatchObject({ level: 50, msg: 'request failed' });

    // The process is still up and answers what needs no database.
    expect((await call(service.url, 'GET', '/openapi.json')).status).toBe(200);
  });
});

function databaseName(service: TestService): string {
  return new URL(service.databaseUrl).pathname.slice(1);
}

async function withAdmin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: process.env.TEST_POSTGRES_URL });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

describe('rate limits on every endpoint class', () => {
  let limited: TestService;
  beforeAll(async () => {
    limited = await startTestService({ env: { API_RATE_LIMIT: '5/60', RESPOND_RATE_LIMIT: '4/60' } });
  });
  afterAll(() => limited?.destroy());

  it('limits each API key on its own, with Retry-After', async () => {
    const a = await registerAccount(limited.url);
    const statuses = [];
    for (let i = 0; i < 6; i++) statuses.push((await call(limited.url, 'GET', '/v1/pause', { token: a.test })).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    const refused = await call(limited.url, 'GET', '/v1/auth/me', { token: a.test });
    expectError(refused, 429, 'rate_limited');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // The other key of the same developer, and other developers, are not held back.
    expect((await call(limited.url, 'GET', '/v1/pause', { token: a.live })).status).toBe(200);
    const b = await registerAccount(limited.url);
    expect((await call(limited.url, 'GET', '/v1/pause', { token: b.test })).status).toBe(200);
  });

  it('limits the public respond endpoints and the page per client address', async () => {
    const owner = await registerAccount(limited.url);
    const pause = await call(limited.url, 'POST', '/v1/pause', { token: owner.live, body: { title: 't' } });
    const token = new URL(pause.body.response_url).pathname.slice(3);
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await call(limited.url, 'GET', `/v1/respond/${token}x${i}`)).status);
    statuses.push((await call(limited.url, 'GET', `/v1/respond/${token}`)).status);
    expect(statuses).toEqual([404, 404, 404, 200]);
    const api = await call(limited.url, 'GET', `/v1/respond/${token}`);
    expectError(api, 429, 'rate_limited');
    const page = await fetch(`${limited.url}/r/${token}`);
    expect(page.status).toBe(429);
    expect(page.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await page.text()).toContain('Too many requests');
  });
});

describe('input no handler should see', () => {
  let guarded: TestService;
  beforeAll(async () => {
    guarded = await startTestService();
  });
  afterAll(() => guarded?.destroy());

  it('refuses U+0000 anywhere and absurd nesting with 400, on either database', async () => {
    const dev = await registerAccount(guarded.url);
    const nul = await call(guarded.url, 'POST', '/v1/pause', { token: dev.test, body: { title: 'a\u0000b' } });
    expectError(nul, 400, 'invalid_request');
    expectError(await call(guarded.url, 'GET', '/v1/pause/%00', { token: dev.test }), 400, 'invalid_request');
    expectError(
      await call(guarded.url, 'GET', '/v1/pause?starting_after=%00', { token: dev.test }),
      400,
      'invalid_request',
    );
    // Written by hand: JSON.stringify itself cannot go this deep.
    const deep = `{"title":"t","metadata":{"deep":${'['.repeat(5000)}1${']'.repeat(5000)}}}`;
    const nested = await call(guarded.url, 'POST', '/v1/pause', {
      token: dev.test,
      rawBody: deep,
      headers: { 'content-type': 'application/json' },
    });
    expectError(nested, 400, 'invalid_request');
    const leap = await call(guarded.url, 'GET', '/v1/events?since=2016-12-31T23:59:60Z', { token: dev.test });
    expectError(leap, 400, 'invalid_request');
  });
});
