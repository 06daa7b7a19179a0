import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, openWatchedPage } from '../helpers/browser.js';
import { call } from '../helpers/http.js';
import { startTestService, type TestService } from '../helpers/service.js';

// The API reference: the OpenAPI document at /openapi.json, and the page at
// /docs, pausepoint's own, rendered from /openapi.json by a renderer served
// from this service, under the same framing and content policy as the other
// pages.

let service: TestService;
let browser: Browser;

beforeAll(async () => {
  [service, browser] = await Promise.all([startTestService(), launchBrowser()]);
});

afterAll(async () => {
  await browser?.close();
  await service?.destroy();
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
    // The page in Chromium: 'the reference in Chromium' below.
  });
});

describe('GET /docs', () => {
  it('is an HTML page under a strict policy: no framing, no inline script, nothing from elsewhere', async () => {
    for (const path of ['/docs', '/docs/']) {
      const reply = await call(service.url, 'GET', path);
      expect(reply.status, path).toBe(200);
      expect(reply.headers.get('content-type')).toMatch(/^text\/html/);
      const csp = reply.headers.get('content-security-policy') ?? '';
      expect(csp, path).toContain("default-src 'none'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).not.toContain('unsafe-inline');
      expect(csp).not.toContain('unsafe-eval');
      expect(csp).not.toMatch(/https?:/);
      expect(reply.headers.get('x-frame-options')).toBe('DENY');
      expect(reply.headers.get('referrer-policy')).toBe('no-referrer');
      expect(reply.headers.get('x-content-type-options')).toBe('nosniff');
      // No inline script: every script comes from this origin.
      expect(reply.text).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
      expect(reply.text).not.toMatch(/\bsrc="(https?:)?\/\//);
      expect(reply.text).toContain('<title>pausepoint API reference</title>');
      expect(reply.text).not.toMatch(/swagger/i);
    }
  });

  it('gives each answer a fresh style nonce', async () => {
    const [first, second] = await Promise.all([call(service.url, 'GET', '/docs'), call(service.url, 'GET', '/docs')]);
    const nonceOf = (csp: string | null) => /'nonce-([^']+)'/.exec(csp ?? '')?.[1];
    const [a, b] = [
      nonceOf(first.headers.get('content-security-policy')),
      nonceOf(second.headers.get('content-security-policy')),
    ];
    expect(a).toMatch(/^[A-Za-z0-9+/=_-]{16,}$/);
    expect(a).not.toBe(b);
    expect(first.text).toContain(`nonce="${a}"`);
  });

  it('serves the renderer from this service, cacheable', async () => {
    const page = await call(service.url, 'GET', '/docs');
    const scripts = [...page.text.matchAll(/<script[^>]*\bsrc="([^"]+)"/g)].map((m) => m[1] ?? '');
    expect(scripts.length).toBeGreaterThan(0);
    for (const src of scripts) {
      expect(src.startsWith('/')).toBe(true);
      const script = await call(service.url, 'GET', src);
      expect(script.status, src).toBe(200);
      expect(script.headers.get('content-type')).toMatch(/^text\/javascript/);
      expect(script.headers.get('cache-control')).toMatch(/^public, max-age=\d+/);
      expect(script.text.length).toBeGreaterThan(1000);
    }
  });

  it('no longer serves the stock Swagger UI', async () => {
    for (const path of ['/docs/static/swagger-ui.css', '/docs/static/logo.svg', '/docs/json']) {
      expect((await call(service.url, 'GET', path)).status, path).toBe(404);
    }
  });
});

describe('the reference in Chromium', () => {
  it('renders the operations under pausepoint’s name, shows <API key> literally, contacts only this origin', {
    timeout: 120_000,
  }, async () => {
    const { page, requests, errors, close } = await openWatchedPage(browser, {
      viewport: { width: 1280, height: 900 },
    });
    try {
      const response = await page.goto(`${service.url}/docs`);
      expect(response?.status()).toBe(200);
      expect(await page.title()).toBe('pausepoint API reference');

      // Every operation of the document is rendered, under its summary.
      const document = (await call(service.url, 'GET', '/openapi.json')).body;
      const summaries = Object.values<Record<string, { summary: string }>>(document.paths).flatMap((operations) =>
        Object.values(operations).map((operation) => operation.summary),
      );
      expect(summaries.length).toBeGreaterThan(10);
      await page.getByRole('heading', { name: summaries.at(-1) }).waitFor({ timeout: 60_000 });
      for (const summary of summaries) {
        expect(await page.getByRole('heading', { name: summary }).count(), summary).toBeGreaterThanOrEqual(1);
      }
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toMatch(/^pausepoint API\b/);

      // The description is read as text, not as HTML: <API key> stays visible.
      const bearer = page.getByText('Authorization: Bearer <API key>', { exact: true });
      expect(await bearer.count()).toBe(1);
      expect(await bearer.isVisible()).toBe(true);
      const text = (await page.locator('body').textContent()) ?? '';
      expect(text).not.toMatch(/Bearer \./);
      expect(text).not.toMatch(/swagger/i);

      await page.waitForLoadState('networkidle');
      const origin = new URL(service.url).origin;
      expect(requests.length).toBeGreaterThanOrEqual(3);
      for (const request of requests) {
        const url = new URL(request.split(' ')[1] ?? '');
        // The renderer's search index runs in a worker built from a blob of this page.
        const from = url.protocol === 'blob:' ? new URL(url.pathname).origin : url.origin;
        expect(from, request).toBe(origin);
      }
      expect(requests).toContain(`GET ${origin}/openapi.json`);
      // No script error and no refusal by the content policy.
      expect(errors).toEqual([]);
    } finally {
      await close();
    }
  });

  it('cannot be framed by another page', async () => {
    const { page, close } = await openWatchedPage(browser);
    try {
      // A page of another origin tries to frame /docs; setContent waits for the frame to load or fail.
      await page.setContent(`<iframe src="${service.url}/docs"></iframe>`);
      const loaded = page.frames().filter((frame) => frame.url().startsWith(service.url));
      expect(loaded.map((frame) => frame.url())).toEqual([]);
    } finally {
      await close();
    }
  });
});
