import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../../helpers/errors.js';
import { call, registerAccount } from '../../helpers/http.js';
import { startTestService, type TestService } from '../../helpers/service.js';

// API_RATE_LIMIT per key and RESPOND_RATE_LIMIT per client address, on a
// service with low limits. The auth limits: test/e2e/accounts/register-and-login.test.ts.

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
