import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../../helpers/errors.js';
import { call } from '../../helpers/http.js';
import { startTestService, type TestService } from '../../helpers/service.js';

// Requests no route serves: unknown paths and methods, and paths refused
// before routing (percent-encoding that does not decode, a segment over 512
// characters). Each gets the API's error body.

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
