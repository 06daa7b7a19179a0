import type { FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { cookieName, csrfMatches, csrfToken, isCrossSite, tokenFromCookie } from '../../src/console/session.js';

// The console's cookie and CSRF helpers, alone. The rules they serve are
// tested over HTTP in test/e2e/console/security.test.ts.

const request = (headers: Record<string, string>) => ({ headers }) as unknown as FastifyRequest;
const http = { publicBaseUrl: 'http://127.0.0.1:3000' };
const https = { publicBaseUrl: 'https://pause.example.com' };

describe('the cookie', () => {
  it('is named with the __Host- prefix only on https', () => {
    expect(cookieName(http)).toBe('pausepoint_console');
    expect(cookieName(https)).toBe('__Host-pausepoint_console');
  });

  it('is read by its exact name, and only when it looks like a token', () => {
    const token = `svc_console_${'a'.repeat(48)}`;
    expect(tokenFromCookie(request({ cookie: `other=1; pausepoint_console=${token}` }), 'pausepoint_console')).toBe(
      token,
    );
    expect(tokenFromCookie(request({ cookie: `xpausepoint_console=${token}` }), 'pausepoint_console')).toBeUndefined();
    expect(tokenFromCookie(request({ cookie: 'pausepoint_console=a;b' }), 'pausepoint_console')).toBe('a');
    expect(tokenFromCookie(request({ cookie: 'pausepoint_console=%3Cx%3E' }), 'pausepoint_console')).toBeUndefined();
    expect(tokenFromCookie(request({}), 'pausepoint_console')).toBeUndefined();
  });
});

describe('CSRF tokens', () => {
  const key = Buffer.alloc(32, 7);
  it('are bound to the session and the key', () => {
    const token = csrfToken(key, 'csess_1');
    expect(csrfMatches(key, 'csess_1', token)).toBe(true);
    expect(csrfMatches(key, 'csess_2', token)).toBe(false);
    expect(csrfMatches(Buffer.alloc(32, 8), 'csess_1', token)).toBe(false);
    expect(csrfMatches(key, 'csess_1', undefined)).toBe(false);
    expect(csrfMatches(key, 'csess_1', [token])).toBe(false);
    expect(csrfMatches(key, 'csess_1', '')).toBe(false);
  });
});

describe('cross-site posts', () => {
  it('are told by Sec-Fetch-Site or by an Origin that is not this service', () => {
    expect(isCrossSite(request({}), http)).toBe(false);
    expect(isCrossSite(request({ 'sec-fetch-site': 'same-origin' }), http)).toBe(false);
    expect(isCrossSite(request({ 'sec-fetch-site': 'same-site' }), http)).toBe(true);
    expect(isCrossSite(request({ 'sec-fetch-site': 'cross-site' }), http)).toBe(true);
    expect(isCrossSite(request({ origin: 'http://127.0.0.1:3000' }), http)).toBe(false);
    expect(isCrossSite(request({ origin: 'https://pause.example.com', host: 'internal:3000' }), https)).toBe(false);
    expect(isCrossSite(request({ origin: 'http://10.0.0.5:3000', host: '10.0.0.5:3000' }), https)).toBe(false);
    expect(isCrossSite(request({ origin: 'https://evil.example', host: '127.0.0.1:3000' }), http)).toBe(true);
    expect(isCrossSite(request({ origin: 'null', host: '127.0.0.1:3000' }), http)).toBe(true);
  });
});
