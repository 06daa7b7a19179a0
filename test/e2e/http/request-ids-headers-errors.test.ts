import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BODY_LIMIT_BYTES } from '../../../src/app.js';
import { expectError, expectOnlyDocumentedErrorFields, REQUEST_ID } from '../../helpers/errors.js';
import { call, registerAccount } from '../../helpers/http.js';
import { createPause, tokenOf } from '../../helpers/pauses.js';
import { startTestService, type TestService } from '../../helpers/service.js';

// What every API response carries: its own request id, headers that keep it
// out of caches, and, for an error, the one documented error body with nothing
// internal in it (docs/errors.md).

const PASSWORD = 'platform password 1';
const JSON_TYPE = { 'content-type': 'application/json' };

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(() => service?.destroy());

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
