import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, registerAccount } from '../../helpers/http.js';
import { startTestService, type TestService } from '../../helpers/service.js';

// Strict-Transport-Security: a service whose public address is https tells
// browsers and clients to keep to https (pages, API answers, /mcp); one served
// on plain http must not, or a browser would refuse to reach it at all.

const HSTS = 'max-age=31536000';

async function answersOf(service: TestService) {
  const dev = await registerAccount(service.url);
  const mcp = await call(service.url, 'POST', '/mcp', {
    token: dev.live,
    headers: { accept: 'application/json, text/event-stream' },
    body: {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } },
    },
  });
  expect(mcp.status).toBe(200);
  return [
    await call(service.url, 'GET', '/v1/auth/me', { token: dev.live }),
    await call(service.url, 'GET', '/v1/pauses/pause_nope', { token: dev.live }),
    await call(service.url, 'GET', '/console/sign-in'),
    await call(service.url, 'GET', '/inbox'),
    await call(service.url, 'GET', '/health'),
    mcp,
  ];
}

describe.each([
  { base: 'https://pausepoint.example.com', expected: HSTS },
  { base: 'http://pausepoint.example.com', expected: null },
])('with PUBLIC_BASE_URL $base', ({ base, expected }) => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService({ env: { PUBLIC_BASE_URL: base } });
  });
  afterAll(async () => {
    await service?.destroy();
  });

  it(`${expected ? 'sends' : 'sends no'} Strict-Transport-Security on pages, API answers and /mcp`, async () => {
    for (const reply of await answersOf(service)) {
      expect(reply.headers.get('strict-transport-security'), reply.text.slice(0, 80)).toBe(expected);
    }
  });
});
