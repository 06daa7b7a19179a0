import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, openWatchedPage } from '../../helpers/browser.js';
import { call, registerAccount } from '../../helpers/http.js';
import { createPause, tokenOf } from '../../helpers/pauses.js';
import { startTestService, type TestService } from '../../helpers/service.js';

// The API reference: the OpenAPI document at /openapi.json, and the page at
// /docs, pausepoint's own, rendered from /openapi.json by a renderer served
// from this service, under the same framing and content policy as the other
// pages.

let service: TestService;
let browser: Browser;

beforeAll(async () => {
  // Localhost is allowed as a webhook address only for the example below, on a machine without DNS.
  [service, browser] = await Promise.all([
    startTestService({ env: { WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8' } }),
    launchBrowser(),
  ]);
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
      expect(['/health', '/metrics', '/mcp'].includes(path) || path.startsWith('/v1/'), path).toBe(true);
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

type Operation = {
  summary?: string;
  description?: string;
  security?: unknown[];
  requestBody?: { content: Record<string, { example?: unknown; examples?: Record<string, { value: unknown }> }> };
};

async function operations(): Promise<[string, string, Operation][]> {
  const paths = (await call(service.url, 'GET', '/openapi.json')).body.paths as Record<
    string,
    Record<string, Operation>
  >;
  return Object.entries(paths).flatMap(([path, byMethod]) =>
    Object.entries(byMethod).map(
      ([method, operation]) => [method.toUpperCase(), path, operation] as [string, string, Operation],
    ),
  );
}

/** The examples an operation's request body shows, by name. */
function examplesOf(operation: Operation): [string, unknown][] {
  const media = operation.requestBody?.content['application/json'];
  if (!media) return [];
  if (media.example !== undefined) return [['example', media.example]];
  return Object.entries(media.examples ?? {}).map(([name, example]) => [name, example.value]);
}

describe('the reference helps a reader', () => {
  it('is titled "pausepoint API", version v1', async () => {
    const { info } = (await call(service.url, 'GET', '/openapi.json')).body;
    expect(info).toMatchObject({ title: 'pausepoint API', version: 'v1' });
  });

  it('names every operation in a few words, and says the rest in its description', async () => {
    const all = await operations();
    expect(all.length).toBeGreaterThan(20);
    for (const [method, path, operation] of all) {
      const summary = operation.summary ?? '';
      expect(summary, `${method} ${path}`).toMatch(/^[A-Z]/);
      expect(summary.split(/\s+/).length, `${method} ${path}: "${summary}"`).toBeLessThanOrEqual(6);
      expect(summary, `${method} ${path}`).not.toMatch(/[;:.]/);
      expect(operation.description?.length ?? 0, `${method} ${path} has a description`).toBeGreaterThan(summary.length);
    }
    // Menu entries are not repeated.
    const summaries = all.map(([, , operation]) => operation.summary);
    expect(new Set(summaries).size).toBe(summaries.length);
  });

  it('documents /mcp (JSON-RPC with a key) and /metrics (Prometheus text, no key)', async () => {
    const all = await operations();
    const find = (method: string, path: string) => all.find(([m, p]) => m === method && p === path)?.[2];
    const mcp = find('POST', '/mcp');
    expect(mcp?.description).toMatch(/JSON-RPC/);
    expect(mcp?.security).toBeUndefined(); // the document-wide Bearer key
    const metrics = find('GET', '/metrics') as Operation & { responses: Record<string, any> };
    expect(metrics.security).toEqual([]);
    expect(metrics.description).toMatch(/monitoring network/);
    expect(Object.keys(metrics.responses['200'].content)).toEqual(['text/plain']);
    // And they answer as documented.
    const scraped = await call(service.url, 'GET', '/metrics');
    expect(scraped.status).toBe(200);
    expect(scraped.text).toContain('# TYPE pausepoint_http_requests_total counter');
  });

  it('gives every request body an example that the service accepts', { timeout: 90_000 }, async () => {
    const account = await registerAccount(service.url);
    // A webhook for the webhook routes' examples (recover).
    const webhook = await call(service.url, 'POST', '/v1/webhooks', {
      token: account.test,
      body: { url: 'https://127.0.0.1:9/hook', events: ['pause.cancelled'], secret: 'whsec_0123456789abcdef' },
    });
    expect(webhook.status, webhook.text).toBe(201);
    /** Values for path parameters: a pending pause's response token, for each example afresh; the webhook. */
    const parameters = async (): Promise<Record<string, string>> => {
      const pause = await createPause(service.url, account.test, { title: 'For the example' });
      return { token: tokenOf(pause), id: pause.id, webhook_id: webhook.body.id };
    };
    const withBodies = (await operations()).filter(([, , operation]) => operation.requestBody);
    // Registering first: logging in with the same example then finds the account.
    withBodies.sort(([, a], [, b]) => Number(b === '/v1/auth/register') - Number(a === '/v1/auth/register'));
    expect(withBodies.map(([method, path]) => `${method} ${path}`)).toEqual(
      expect.arrayContaining(['POST /v1/auth/register', 'POST /v1/pause', 'POST /v1/webhooks', 'POST /mcp']),
    );
    for (const [method, path, operation] of withBodies) {
      const examples = examplesOf(operation);
      expect(examples.length, `${method} ${path} has an example`).toBeGreaterThan(0);
      for (const [name, example] of examples) {
        const values = await parameters();
        const url = path.replace(/\{(\w+)\}/g, (_, param: string) => {
          expect(values, `a value for {${param}}`).toHaveProperty(param);
          return encodeURIComponent(values[param]!);
        });
        const send = (body: unknown) =>
          call(service.url, method, url, {
            body,
            token: operation.security?.length === 0 ? undefined : account.test,
            headers: path === '/mcp' ? { accept: 'application/json, text/event-stream' } : {},
          });
        let reply = await send(example);
        const url_ = (example as { url?: string }).url;
        if (reply.body?.error?.message === "The URL's host name does not resolve." && url_) {
          // This machine has no DNS: the same example, its host an address literal, which needs none.
          const local = new URL(url_);
          local.hostname = '127.0.0.1';
          reply = await send({ ...(example as object), url: local.toString() });
        }
        expect(reply.status, `${method} ${path} (${name}): ${reply.text}`).toBeGreaterThanOrEqual(200);
        expect(reply.status, `${method} ${path} (${name}): ${reply.text}`).toBeLessThan(300);
        if (path === '/mcp') expect(reply.text).not.toMatch(/"error"|"isError":true/);
      }
    }
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
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('pausepoint API (v1)');

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
