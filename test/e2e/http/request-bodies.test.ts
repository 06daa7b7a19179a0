import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BODY_LIMIT_BYTES } from '../../../src/app.js';
import { expectError } from '../../helpers/errors.js';
import { call, registerAccount } from '../../helpers/http.js';
import { startTestService, type TestService } from '../../helpers/service.js';

// What a request body must be before any handler reads it: JSON that parses,
// no prototype keys, at most 1 MiB, sent as application/json. And input no
// handler should see, in a body, a path or a query: U+0000, absurd nesting,
// a leap second.

const JSON_TYPE = { 'content-type': 'application/json' };

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(() => service?.destroy());

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

  it('answers 400, never 500, to objects with a field named toString or valueOf where items must be unique', async () => {
    const dev = await registerAccount(service.url);
    const reply = await call(service.url, 'POST', '/v1/pause', {
      token: dev.test,
      body: { title: 'Ship?', options: ['approve', 'reject'], deliver: [{ toString: '' }, { toString: '' }] },
    });
    expectError(reply, 400, 'invalid_request');
    expect(reply.body.error.details.fields.map((f: { field: string }) => f.field)).toContain('deliver.0');
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
