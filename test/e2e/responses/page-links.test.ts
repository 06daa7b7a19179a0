import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Account, call, registerAccount } from '../../helpers/http.js';
import { createPause, tokenOf } from '../../helpers/pauses.js';
import { startTestService, type TestService } from '../../helpers/service.js';

// Links as they arrive in the wild: mangled query strings, padded tokens,
// answers from a second tab. Each still gets a page, never bare JSON.

let service: TestService;
let dev: Account;
beforeAll(async () => {
  service = await startTestService();
  dev = await registerAccount(service.url);
});
afterAll(() => service.destroy());

async function page(path: string, init?: RequestInit) {
  const response = await fetch(`${service.url}${path}`, { redirect: 'manual', ...init });
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    csp: response.headers.get('content-security-policy'),
    html: await response.text(),
  };
}

it('shows the page for odd query strings instead of a JSON error', async () => {
  const pause = await createPause(service.url, dev.test);
  for (const query of ['?answered=yes', `?choice=${'x'.repeat(500)}`, '?choice=approve&choice=reject', '?unknown=1']) {
    const reply = await page(`/r/${tokenOf(pause)}${query}`);
    expect(reply.status, query).toBe(200);
    expect(reply.type).toMatch(/^text\/html/);
    expect(reply.csp).toContain("default-src 'none'");
    expect(reply.html).toContain('A decision is needed');
  }
});

it('shows the not-found page, with its headers, for tokens of any length', async () => {
  const pause = await createPause(service.url, dev.test);
  for (const token of [`${tokenOf(pause)}${'A'.repeat(300)}`, 'x'.repeat(400), `${tokenOf(pause)}%20`]) {
    const reply = await page(`/r/${token}`);
    expect(reply.status).toBe(404);
    expect(reply.html).toContain('This link is not valid');
    expect(reply.csp).toContain("default-src 'none'");
    const api = await call(service.url, 'GET', `/v1/respond/${token}`);
    expect(api.status).toBe(404);
    expect(api.body.error.code).toBe('not_found');
  }
});

it('words the final states and refusals for the person answering', async () => {
  const pause = await createPause(service.url, dev.test);
  await call(service.url, 'POST', `/v1/respond/${tokenOf(pause)}`, { body: { choice: 'approve' } });
  const answered = await page(`/r/${tokenOf(pause)}`);
  expect(answered.html).toContain('Decision recorded');
  expect(answered.html).not.toContain('A decision is needed');
  const late = await page(`/r/${tokenOf(pause)}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'choice=reject',
  });
  expect(late.status).toBe(409);
  expect(late.html).toContain('This question has already been answered.');
  expect(late.html).not.toContain('This pause');

  const cancelled = await createPause(service.url, dev.test);
  await call(service.url, 'DELETE', `/v1/pause/${cancelled.id}`, { token: dev.test });
  const closed = await page(`/r/${tokenOf(cancelled)}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'choice=approve',
  });
  expect(closed.status).toBe(410);
  expect(closed.html).toContain('No longer open');
  expect(closed.html).toContain('This question is closed');
});
