import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import fc from 'fast-check';
import { request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { BODY_LIMIT_BYTES } from '../../src/app.js';
import { type Account, call, registerAccount } from '../helpers/http.js';
import { createPause, tokenOf } from '../helpers/pauses.js';
import { startTestService, type TestService } from '../helpers/service.js';
import {
  anyBody,
  anyString,
  anyValue,
  contentType,
  dateTimeString,
  deepJson,
  extraHeaders,
  headerValue,
  hex,
  hugeString,
  idempotencyKey,
  type JsonSchema,
  nearValidCredential,
  pathSegment,
  queryString,
  scrubText,
  scrubValue,
  valueFor,
  waitSeconds,
  wellFormed,
} from './arbitraries.js';

// Fuzzing every endpoint of the OpenAPI document (and the pages beside it)
// with random paths, queries, headers, credentials and bodies. Whatever comes
// in, the service answers within a few seconds, never with a 5xx, never with
// a stack trace or a file path, and every API error has the documented shape
// {"error": {code, message, request_id}} with the code docs/errors.md gives for
// its status.

const PAYMENT_SECRET = 'whsec_property_fuzz_0123456789abcdef';
const ANSWER_WITHIN_MS = 5000;

let service: TestService;
let alice: Account;
let bob: Account;
let session: string;
let endpoints: Endpoint[];

/** Credentials by name, read at send time: rotation during fuzzing replaces them. */
const keys: Record<'aliceTest' | 'aliceLive' | 'bobTest' | 'session', string> = {
  aliceTest: '',
  aliceLive: '',
  bobTest: '',
  session: '',
};

/** Real object ids and response tokens, by path parameter name (alice's test-mode objects first). */
const fixtures = {
  id: [] as string[],
  notification_id: [] as string[],
  webhook_id: [] as string[],
  delivery_id: [] as string[],
  token: [] as string[],
};
/** Where, in fixtures.token, the schema-shaped answers find a pause made for them. */
const FRESH = 3;
/** Alice's test-mode objects, and what only she may see. */
const aliceOwn = { pause: '', notification: '', webhook: '', delivery: '', metadata: 'alice-private-metadata' };

interface Endpoint {
  method: string;
  path: string;
  /** Path parameter names, in order. */
  params: string[];
  /** Documented query parameter names. */
  query: string[];
  body?: JsonSchema;
  /** Whether it needs a key (or session). */
  secured: boolean;
}

// --- The service under test -------------------------------------------------

beforeAll(async () => {
  service = await startTestService({
    env: {
      PAYMENT_WEBHOOK_SECRET: PAYMENT_SECRET,
      // Webhooks to 127.0.0.1:1 are accepted and fail at once (connection refused), far from any real host.
      WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8',
      WEBHOOK_RETRY_SCHEDULE_MS: '600000',
    },
  });
  alice = await registerAccount(service.url);
  bob = await registerAccount(service.url);
  keys.aliceTest = alice.test;
  keys.aliceLive = alice.live;
  keys.bobTest = bob.test;
  const login = await call(service.url, 'POST', '/v1/auth/login', {
    body: { email: alice.email, password: alice.password },
  });
  session = login.body.session.token;
  keys.session = session;

  const doc = (await call(service.url, 'GET', '/openapi.json')).body;
  endpoints = [];
  for (const [path, operations] of Object.entries<Record<string, any>>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(operations)) {
      const parameters: { in: string; name: string }[] = op.parameters ?? [];
      endpoints.push({
        method: method.toUpperCase(),
        path,
        params: parameters.filter((p) => p.in === 'path').map((p) => p.name),
        query: parameters.filter((p) => p.in === 'query').map((p) => p.name),
        body: op.requestBody?.content?.['application/json']?.schema,
        secured: !(Array.isArray(op.security) && op.security.length === 0),
      });
    }
  }
  // The pages and documents beside the API.
  for (const [method, path, params] of [
    ['GET', '/r/{token}', ['token']],
    ['POST', '/r/{token}', ['token']],
    ['GET', '/docs', []],
    ['GET', '/openapi.json', []],
    ['GET', '/metrics', []],
    ['GET', '/assets/page.css', []],
    ['GET', '/favicon.ico', []],
  ] as const) {
    endpoints.push({ method, path, params: [...params], query: [], secured: false });
  }
  await ensureFixtures();
}, 60_000);

afterAll(() => service?.destroy());

/** Objects of every kind for real path parameters; recreated when fuzzing deleted them. */
async function ensureFixtures() {
  if (!aliceOwn.pause) {
    const pending = await createPause(service.url, keys.aliceTest, {
      options: ['approve', 'reject', 'later'],
      allow_text: true,
      notify: { email: ['ops@example.com'] },
      metadata: { secret_marker: aliceOwn.metadata },
    });
    const live = await createPause(service.url, keys.aliceLive);
    const bobs = await createPause(service.url, keys.bobTest);
    const bobHook = await call(service.url, 'POST', '/v1/webhooks', {
      token: keys.bobTest,
      body: { url: 'https://127.0.0.1:1/bob', events: ['pause.cancelled'], secret: 'b3f9c2e7b1d84650a3f9c2e7b1d84650' },
    });
    expect(bobHook.status, bobHook.text).toBe(201);
    aliceOwn.pause = pending.id;
    aliceOwn.notification = pending.notifications[0].id;
    fixtures.id = [pending.id, live.id, bobs.id];
    fixtures.notification_id = [pending.notifications[0].id];
    fixtures.webhook_id = ['', bobHook.body.id];
    fixtures.token = [tokenOf(pending), tokenOf(live), tokenOf(bobs)];
  }
  const list = await call(service.url, 'GET', '/v1/webhooks', { token: keys.aliceTest });
  if (list.body.data?.some((w: { id: string }) => w.id === aliceOwn.webhook)) return;
  // The fuzzer deleted alice's webhook (or this is the first time): a new one, with a delivery.
  const created = await call(service.url, 'POST', '/v1/webhooks', {
    token: keys.aliceTest,
    body: {
      url: 'https://127.0.0.1:1/hook',
      events: ['pause.responded', 'pause.cancelled', 'pause.timed_out'],
      secret: 'a3f9c2e7b1d84650a3f9c2e7b1d84650',
    },
  });
  expect(created.status, created.text).toBe(201);
  const doomed = await createPause(service.url, keys.aliceTest);
  await call(service.url, 'DELETE', `/v1/pause/${doomed.id}`, { token: keys.aliceTest });
  const deliveries = await call(service.url, 'GET', `/v1/webhooks/${created.body.id}/deliveries`, {
    token: keys.aliceTest,
  });
  expect(deliveries.body.data.length, deliveries.text).toBeGreaterThan(0);
  aliceOwn.webhook = created.body.id;
  aliceOwn.delivery = deliveries.body.data[0].id;
  fixtures.webhook_id[0] = aliceOwn.webhook;
  fixtures.delivery_id = [aliceOwn.delivery];
  if (!fixtures.id.includes(doomed.id)) fixtures.id.push(doomed.id);
}

beforeEach(async () => {
  await ensureFixtures();
});

// --- Requests and the oracle ------------------------------------------------

type Who = keyof typeof keys;
type Auth =
  | { kind: 'none' }
  | { kind: 'header'; value: string }
  | { kind: 'bearer'; value: string }
  | { kind: 'key'; who: Who; scheme: string };

type Param = { kind: 'real'; index: number } | { kind: 'fuzz'; segment: string };

interface FuzzRequest {
  method: string;
  endpoint: Endpoint;
  params: Param[];
  query: string;
  auth: Auth;
  headers: Record<string, string>;
  body?: string | Buffer;
}

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

function resolvePath(req: FuzzRequest): string {
  let i = 0;
  const path = req.endpoint.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const param = req.params[i++] ?? { kind: 'fuzz', segment: 'x' };
    if (param.kind === 'fuzz') return param.segment;
    const values = fixtures[name as keyof typeof fixtures] ?? [];
    return encodeURIComponent(values[param.index % Math.max(1, values.length)] ?? 'missing');
  });
  return path + req.query;
}

function resolveHeaders(req: FuzzRequest): Record<string, string> {
  const headers = { ...req.headers };
  const auth = req.auth;
  if (auth.kind === 'header') headers.authorization = auth.value;
  if (auth.kind === 'bearer') headers.authorization = `Bearer ${auth.value}`;
  if (auth.kind === 'key') headers.authorization = `${auth.scheme}${keys[auth.who]}`;
  return headers;
}

const shorten = (text: string, max = 300) =>
  text.length > max ? `${text.slice(0, max)}… (${text.length} chars)` : text;

function describeRequest(
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string | Buffer,
): string {
  const shownBody =
    body === undefined ? '' : typeof body === 'string' ? shorten(JSON.stringify(body)) : `<${body.length} bytes>`;
  const shownHeaders = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, shorten(v, 120)]));
  return `${method} ${shorten(path, 200)} ${JSON.stringify(shownHeaders)} ${shownBody}`;
}

async function send(
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string | Buffer,
): Promise<Reply> {
  const timeout = ANSWER_WITHIN_MS + waitSeconds(path) * 1000;
  try {
    const response = await request(`${service.url}${path}`, {
      method: method as 'GET',
      headers,
      body,
      signal: AbortSignal.timeout(timeout),
    });
    const text = await response.body.text();
    return { status: response.statusCode, headers: response.headers, text };
  } catch (error) {
    const name = (error as Error).name;
    if (name === 'TimeoutError' || name === 'AbortError') {
      throw new Error(`no answer within ${timeout} ms: ${describeRequest(method, path, headers, body)}`);
    }
    throw error;
  }
}

/** The error table of docs/errors.md: each documented code and its status. */
const DOCUMENTED_CODES: Record<string, number> = (() => {
  const section = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
  const codes: Record<string, number> = {};
  for (const [, status, cell] of section.matchAll(/^\| (\d{3}) \| (.*) \|$/gm)) {
    for (const [, code] of (cell ?? '').replace(/\([^)]*\)/g, '').matchAll(/`([a-z_]+)`/g))
      codes[code as string] = Number(status);
  }
  return codes;
})();

/** What a leaked stack trace, source path or driver error looks like. */
const LEAKS: RegExp[] = [
  /^\s*at .+[:(][^\s]*:\d+:\d+\)?\s*$/m,
  /\bat (?:async )?[\w$.<>]+ \((?:file:\/\/|node:|\/)[^)]*\)/,
  /node_modules/,
  /file:\/\//,
  new RegExp(process.cwd().replace(/[.*+?^${}()|[\]\\]/g, '\\$&')),
  /\/src\/[\w/-]+\.[jt]s\b/,
  /\b(?:TypeError|RangeError|ReferenceError|SyntaxError|DatabaseError|SqliteError|AssertionError): /,
  /\bSQLITE_[A-Z]+\b/,
  /\binvalid byte sequence for encoding\b/,
  /\bduplicate key value violates\b/,
];

/** Every check on one answer. `input` is what was sent, so that echoes of it are not taken for leaks. */
function checkReply(
  method: string,
  path: string,
  headers: Record<string, string>,
  body: string | Buffer | undefined,
  reply: Reply,
) {
  const what = () => `${describeRequest(method, path, headers, body)}\n→ ${reply.status} ${shorten(reply.text, 500)}`;
  expect(reply.status, what()).toBeLessThan(500);

  let input = `${path}\n${JSON.stringify(headers)}\n${typeof body === 'string' ? body : ''}`;
  try {
    input += `\n${decodeURIComponent(path)}`;
  } catch {}
  for (const pattern of LEAKS) {
    const found = reply.text.match(pattern);
    if (found && !input.includes(found[0].trim())) throw new Error(`leaked ${JSON.stringify(found[0])}: ${what()}`);
  }

  const pathname = path.split('?')[0] ?? '';
  const isPage = pathname.startsWith('/r/') || pathname.startsWith('/docs');
  expect(reply.headers['x-request-id'], what()).toMatch(/^req_[0-9a-f]{24}$/);
  if (pathname.startsWith('/v1/')) expect(reply.headers['cache-control'], what()).toBe('no-store');
  if (reply.status < 400 || method === 'HEAD') return;
  if (reply.status === 429) expect(reply.headers['retry-after'], what()).toMatch(/^\d+$/);
  // The pages answer in HTML; everything else, and any JSON answer, in the documented shape.
  const type = String(reply.headers['content-type']);
  if (isPage && type.startsWith('text/html')) return;
  expect(type, what()).toMatch(/^application\/json/);
  const parsed = JSON.parse(reply.text);
  if (pathname === '/mcp' && parsed.jsonrpc === '2.0') {
    // Past the API's own checks (key, rate limit, body caps), /mcp answers as MCP's transport does:
    // a JSON-RPC error, as /docs says.
    expect(parsed, what()).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: expect.any(Number), message: expect.any(String) },
    });
    expect(parsed.error.message.length, what()).toBeGreaterThan(0);
    return;
  }
  expect(parsed, what()).toEqual({
    error: expect.objectContaining({
      code: expect.any(String),
      message: expect.any(String),
      request_id: reply.headers['x-request-id'],
    }),
  });
  expect(
    Object.keys(parsed.error).filter((k) => !['code', 'message', 'request_id', 'details'].includes(k)),
    what(),
  ).toEqual([]);
  expect(parsed.error.message.length, what()).toBeGreaterThan(0);
  expect(DOCUMENTED_CODES[parsed.error.code], `undocumented error code: ${what()}`).toBe(reply.status);
}

async function exchange(req: FuzzRequest): Promise<Reply> {
  const path = resolvePath(req);
  const headers = resolveHeaders(req);
  const reply = await send(req.method, path, headers, req.body);
  checkReply(req.method, path, headers, req.body, reply);
  // Keep the fixtures' keys current when the fuzzer rotates one.
  if (req.endpoint.path === '/v1/auth/keys/rotate' && reply.status === 200 && req.auth.kind === 'key') {
    const rotated = JSON.parse(reply.text) as { key: string; mode: 'live' | 'test' };
    const owner = req.auth.who === 'bobTest' ? 'bob' : 'alice';
    if (owner === 'bob') keys.bobTest = rotated.key;
    else if (rotated.mode === 'live') keys.aliceLive = rotated.key;
    else keys.aliceTest = rotated.key;
  }
  return reply;
}

// --- Generators of whole requests --------------------------------------------

const whoever: fc.Arbitrary<Who> = fc.constantFrom('aliceTest', 'aliceTest', 'aliceLive', 'bobTest', 'session');

const auth: fc.Arbitrary<Auth> = fc.oneof(
  { weight: 2, arbitrary: fc.constant({ kind: 'none' as const }) },
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('key' as const),
      who: whoever,
      scheme: fc.constantFrom('Bearer ', 'Bearer ', 'bearer ', 'BEARER   ', 'Bearer\t', 'Basic ', 'Token ', ''),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('bearer' as const), value: fc.oneof(nearValidCredential, headerValue) }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('header' as const), value: headerValue }) },
);

const param: fc.Arbitrary<Param> = fc.oneof(
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('real' as const), index: fc.nat(5) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('fuzz' as const), segment: pathSegment }) },
);

function requestFor(
  endpoint: Endpoint,
  options: { auth?: fc.Arbitrary<Auth>; body?: fc.Arbitrary<string | Buffer | undefined> } = {},
): fc.Arbitrary<FuzzRequest> {
  const method = fc.oneof(
    { weight: 12, arbitrary: fc.constant(endpoint.method) },
    { weight: 1, arbitrary: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD', 'TRACE') },
  );
  const headers = fc
    .record({
      ct: contentType,
      idem: fc.option(idempotencyKey, { freq: 3 }),
      extra: extraHeaders,
    })
    .map(({ ct, idem, extra }) => {
      const out: Record<string, string> = { ...extra };
      if (ct !== undefined) out['content-type'] = ct;
      if (idem !== null) out['idempotency-key'] = idem;
      return out;
    });
  const body =
    options.body ??
    (endpoint.body
      ? fc.oneof(
          anyBody,
          valueFor(endpoint.body).map((v) => JSON.stringify(scrubValue(v))),
        )
      : anyBody);
  return fc
    .record({
      method,
      params: fc.array(param, { minLength: endpoint.params.length, maxLength: endpoint.params.length }),
      query: queryString(endpoint.query),
      auth: options.auth ?? auth,
      headers,
      body,
    })
    .map((r) => {
      const req: FuzzRequest = { ...r, endpoint };
      if (req.method === 'HEAD') req.body = undefined;
      return req;
    });
}

// --- Properties ---------------------------------------------------------------

describe('every endpoint, fuzzed', () => {
  it('docs/errors.md documents the error codes this file checks against', () => {
    expect(DOCUMENTED_CODES).toMatchObject({
      invalid_request: 400,
      unauthorized: 401,
      not_found: 404,
      pause_closed: 410,
      internal_error: 500,
    });
  });

  it('the OpenAPI document lists the API', () => {
    const listed = endpoints.map((e) => `${e.method} ${e.path}`);
    expect(listed).toContain('POST /v1/pause');
    expect(listed).toContain('POST /v1/respond/{token}');
    expect(listed.length).toBeGreaterThanOrEqual(25);
  });

  it('random paths, queries, headers, credentials and bodies never get a 5xx, a hang, a leak or an undocumented error', async () => {
    for (const endpoint of endpoints) {
      await fc.assert(
        fc.asyncProperty(requestFor(endpoint), async (req) => {
          await exchange(req);
        }),
        { numRuns: 25 },
      );
    }
  }, 120_000);

  it('unknown paths and methods get the documented 404', async () => {
    const path = fc
      .tuple(
        fc.constantFrom('v1', 'v2', 'r', 'api', 'v1/pause', 'v1/webhooks', 'assets', ''),
        fc.array(pathSegment, { minLength: 1, maxLength: 4 }),
      )
      .map(([prefix, segments]) => `/${prefix}/${segments.join('/')}`);
    await fc.assert(
      fc.asyncProperty(
        path,
        fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE'),
        anyBody,
        async (p, method, body) => {
          const headers = { 'content-type': 'application/json', authorization: `Bearer ${keys.aliceTest}` };
          const reply = await send(method, p, headers, body);
          checkReply(method, p, headers, body, reply);
        },
      ),
      { numRuns: 150 },
    );
  }, 60_000);
});

describe('documented query parameters, valued by their schemas', () => {
  it('every endpoint with query parameters, with a valid key', async () => {
    const withQuery = endpoints.filter((e) => e.query.length > 0);
    expect(withQuery.length).toBeGreaterThanOrEqual(4);
    const value = (name: string): fc.Arbitrary<string> => {
      switch (name) {
        case 'wait':
          // Never long enough to make the run slow.
          return fc.constantFrom('0', '1', '-1', '61', '0.5', '1e0', 'x', '');
        case 'since':
          return dateTimeString;
        case 'limit':
          return fc.oneof(
            fc.integer({ min: -5, max: 105 }).map(String),
            fc.constantFrom('1.5', '1e2', '0x10', ' 5', ''),
          );
        case 'status':
          return fc.constantFrom('pending', 'responded', 'timed_out', 'cancelled', 'PENDING', '', 'pending,responded');
        case 'mode':
          return fc.constantFrom('live', 'test', 'LIVE', '', 'sess');
        default:
          return fc.oneof(
            fc.constantFrom(...fixtures.id, ...fixtures.delivery_id, ''),
            anyString.map((v) => wellFormed(scrubText(v))),
          );
      }
    };
    for (const endpoint of withQuery) {
      const query = fc
        .array(
          fc
            .constantFrom(...endpoint.query)
            .chain((name) => value(name).map((v) => `${name}=${encodeURIComponent(v)}`)),
          { maxLength: 4 },
        )
        .map((pairs) => (pairs.length ? `?${pairs.join('&')}` : ''));
      const req = fc
        .record({ query, who: fc.constantFrom<Who>('aliceTest', 'aliceLive', 'session'), index: fc.nat(3) })
        .map(
          ({ query: q, who, index }): FuzzRequest => ({
            method: endpoint.method,
            endpoint,
            params: endpoint.params.map(() => ({ kind: 'real' as const, index })),
            query: q,
            auth: { kind: 'key', who, scheme: 'Bearer ' },
            headers: {},
          }),
        );
      await fc.assert(
        fc.asyncProperty(req, async (r) => {
          await exchange(r);
        }),
        { numRuns: 40 },
      );
    }
  }, 60_000);
});

describe('bodies shaped by the schema, with valid credentials, reach the handlers', () => {
  const shaped: [string, string, number][] = [
    ['POST', '/v1/pause', 200],
    ['POST', '/v1/webhooks', 120],
    ['POST', '/v1/respond/{token}', 80],
    ['POST', '/v1/auth/register', 40],
    ['POST', '/v1/auth/login', 40],
  ];
  // Fields whose values are better drawn from their domain than from their type alone.
  const webhookUrl = fc.oneof(
    fc.constantFrom(
      'https://127.0.0.1:1/ok',
      'https://10.0.0.1/',
      'https://0x7f000001:1/',
      'https://[::1]/',
      'https://hooks.example.invalid/x',
      'http://127.0.0.1/',
      'https://user:pw@127.0.0.1/',
      'https://127.0.0.1:0/',
      'https://127.0.0.1:65536/',
      'https://localhost/',
      `https://127.0.0.1/${'a'.repeat(2050)}`,
    ),
    anyString.map((s) => `https://127.0.0.1:1/${encodeURIComponent(wellFormed(s))}`),
  );
  const fields = (): Record<string, fc.Arbitrary<unknown>> => ({
    url: webhookUrl,
    slack_webhook_url: webhookUrl,
    events: fc.uniqueArray(
      fc.constantFrom('pause.responded', 'pause.timed_out', 'pause.cancelled', 'pause.created', 'pause.*', ''),
      { maxLength: 4 },
    ),
    secret: fc.oneof(hex(32), fc.constantFrom('aaaaaaaaaaaaaaaa', 'short', '0123456789abcdef', ' '.repeat(20))),
    choice: fc.constantFrom('approve', 'reject', 'later', 'APPROVE', ''),
    timeout_default: fc.constantFrom('approve', 'reject', 'maybe'),
    options: fc.uniqueArray(fc.constantFrom('approve', 'reject', 'later', '🙂', '<b>x</b>'), {
      minLength: 1,
      maxLength: 4,
    }),
    expires_in: fc.integer({ min: 1, max: 30 * 86400 + 1 }),
    metadata: fc.oneof(
      anyValue,
      hugeString.map((s) => ({ blob: s })),
    ),
    email: fc.oneof(
      fc.emailAddress(),
      fc.constantFrom(alice.email, alice.email.toUpperCase()),
      fc.array(fc.emailAddress(), { maxLength: 11 }),
    ),
    password: fc.oneof(
      fc.constantFrom('correct horse battery', 'x'.repeat(10), 'x'.repeat(128), 'x'.repeat(129)),
      anyString,
    ),
  });

  it.each(shaped)(
    '%s %s',
    async (method, path, numRuns) => {
      const endpoint = endpoints.find((e) => e.method === method && e.path === path);
      expect(endpoint).toBeDefined();
      const schema = endpoint?.body as JsonSchema;
      let body = valueFor(schema, { fields: fields() }).map((v) => JSON.stringify(scrubValue(v)));
      if (path === '/v1/pause') {
        // Deeply nested metadata, written as text (JSON.stringify here would overflow first).
        const deepMetadata = deepJson.map((inner) => `{"title":"Deep?","metadata":{"a":${inner}}}`);
        body = fc.oneof({ weight: 5, arbitrary: body }, { weight: 1, arbitrary: deepMetadata });
      }
      const validAuth = fc.record({
        kind: fc.constant('key' as const),
        who: fc.constantFrom<Who>('aliceTest', 'aliceTest', 'aliceLive'),
        scheme: fc.constant('Bearer '),
      });
      const arbitrary = fc
        .tuple(requestFor(endpoint as Endpoint, { auth: validAuth, body }), fc.nat(9))
        .map(([req, roll]) => ({
          ...req,
          method,
          // Mostly a genuine token of a fresh pending pause (index FRESH), so that answers reach one.
          params: req.params.map((p) => (roll < 8 ? { kind: 'real' as const, index: FRESH } : p)),
          headers: { ...req.headers, 'content-type': 'application/json' },
        }));
      await fc.assert(
        fc.asyncProperty(arbitrary, fc.boolean(), async (req, allowText) => {
          if (path === '/v1/respond/{token}') {
            const fresh = await createPause(service.url, keys.aliceTest, {
              options: ['approve', 'reject', 'later', '🙂'],
              allow_text: allowText,
            });
            fixtures.token[FRESH] = tokenOf(fresh);
          }
          await exchange(req);
        }),
        { numRuns },
      );
    },
    60_000,
  );

  it('POST /v1/billing/webhook: correctly signed random events', async () => {
    const created = fc.oneof(
      fc.integer({ min: 0, max: 2 ** 31 - 1 }),
      fc.constantFrom(Math.floor(Date.now() / 1000), 0, -1, 2 ** 31 - 1),
      fc.constantFrom(1.5, 2 ** 31, 2 ** 53, 1e300, -(2 ** 40)),
      anyValue,
    );
    const object = fc.record(
      {
        client_reference_id: fc.oneof(fc.constant(alice.id), anyString, anyValue),
        customer: fc.oneof(fc.constantFrom('cus_1', 'cus_2'), anyString, anyValue),
        status: fc.oneof(fc.constantFrom('active', 'trialing', 'canceled', 'past_due'), anyValue),
        metadata: fc.oneof(
          fc.record(
            {
              plan: fc.oneof(fc.constantFrom('free', 'pro', 'scale', 'enterprise', '__proto__'), anyString),
              developer_id: fc.oneof(fc.constant(alice.id), anyString),
            },
            { requiredKeys: [] },
          ),
          anyValue,
        ),
        items: fc.oneof(
          fc.record({
            data: fc.array(
              fc.record({
                price: fc.record({ lookup_key: fc.oneof(fc.constantFrom('pro', 'scale'), anyString, anyValue) }),
              }),
              { maxLength: 2 },
            ),
          }),
          anyValue,
        ),
      },
      { requiredKeys: [] },
    );
    const event = fc.oneof(
      fc.record(
        {
          id: fc.oneof(
            fc.string({ minLength: 1, maxLength: 30 }).map((s) => `evt_${s}`),
            anyString,
            fc.constant('x'.repeat(256)),
            anyValue,
          ),
          object: fc.constant('event'),
          type: fc.oneof(
            fc.constantFrom(
              'checkout.session.completed',
              'customer.subscription.created',
              'customer.subscription.updated',
              'customer.subscription.deleted',
              'invoice.paid',
            ),
            anyString,
            anyValue,
          ),
          created,
          data: fc.oneof(fc.record({ object }), anyValue),
        },
        { requiredKeys: ['id', 'type', 'created', 'data'] },
      ),
      anyValue,
    );
    const raw = fc.oneof(
      { weight: 5, arbitrary: event.map((e) => JSON.stringify(scrubValue(e)) ?? 'null') },
      { weight: 1, arbitrary: anyBody.map((b) => (b === undefined ? '' : b.toString())) },
    );
    const signature = fc.oneof(
      { weight: 6, arbitrary: fc.constant('good') },
      { weight: 1, arbitrary: fc.constantFrom('stale', 'future', 'wrong', 'many') },
      { weight: 1, arbitrary: headerValue },
    );
    await fc.assert(
      fc.asyncProperty(raw, signature, async (body, how) => {
        const now = Math.floor(Date.now() / 1000);
        const sign = (t: number, secret = PAYMENT_SECRET) =>
          createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');
        const header =
          {
            good: `t=${now},v1=${sign(now)}`,
            stale: `t=${now - 301},v1=${sign(now - 301)}`,
            future: `t=${now + 301},v1=${sign(now + 301)}`,
            wrong: `t=${now},v1=${sign(now, 'whsec_wrong')}`,
            many: `t=${now},v1=${'0'.repeat(64)},v1=${sign(now)},v0=abc`,
          }[how] ?? how;
        const headers = { 'content-type': 'application/json', 'payment-signature': header };
        const reply = await send('POST', '/v1/billing/webhook', headers, body);
        checkReply('POST', '/v1/billing/webhook', headers, body, reply);
        const refusal = Buffer.byteLength(body) > BODY_LIMIT_BYTES ? 413 : 400;
        if (how !== 'good' && how !== 'many') expect(reply.status, reply.text).toBe(refusal);
      }),
      { numRuns: 200 },
    );
  }, 60_000);
});

describe('Idempotency-Key', () => {
  it('concurrent retries with one key create one pause; a different body is a 409, never a second pause', async () => {
    const title = fc
      .string({ unit: 'grapheme', minLength: 1, maxLength: 20 })
      .map(scrubText)
      .filter((t) => t.length > 0 && t.length <= 200);
    await fc.assert(
      fc.asyncProperty(
        fc.tuple(title, title),
        fc.array(fc.nat(1), { minLength: 2, maxLength: 6 }),
        fc.constantFrom<Who>('aliceTest', 'bobTest'),
        fc.string({ minLength: 1, maxLength: 40 }).map((k) => scrubText(k).trim() || 'k'),
        async ([first, second], picks, who, suffix) => {
          const key = `${suffix}-${Math.random().toString(36).slice(2)}`;
          const bodies = picks.map((i) => JSON.stringify({ title: i === 0 ? first : second, metadata: { n: i } }));
          const headers = {
            'content-type': 'application/json',
            'idempotency-key': key,
            authorization: `Bearer ${keys[who]}`,
          };
          const replies = await Promise.all(bodies.map((body) => send('POST', '/v1/pause', headers, body)));
          for (const [i, reply] of replies.entries()) checkReply('POST', '/v1/pause', headers, bodies[i], reply);
          const what = JSON.stringify(replies.map((r) => [r.status, shorten(r.text, 120)]));
          const created = replies.map((r, i) => ({ r, body: bodies[i] })).filter(({ r }) => r.status === 201);
          expect(created.length, what).toBeGreaterThan(0);
          expect(new Set(created.map(({ r }) => JSON.parse(r.text).id)).size, what).toBe(1);
          // All 201s answer the one body that won; only that body's requests get them.
          expect(new Set(created.map(({ body }) => body)).size, what).toBe(1);
          expect(created.filter(({ r }) => r.headers['idempotent-replayed'] !== 'true').length, what).toBe(1);
          const winner = created[0]?.body;
          replies.forEach((r, i) => {
            if (bodies[i] === winner) expect(r.status, what).toBe(201);
            else {
              expect(r.status, what).toBe(409);
              expect(JSON.parse(r.text).error.code, what).toBe('idempotency_conflict');
            }
          });
        },
      ),
      { numRuns: 40 },
    );
  }, 60_000);
});

describe('credentials', () => {
  it('random well-formed keys and session tokens never authenticate', async () => {
    const secured = endpoints.filter((e) => e.secured);
    const credential = fc.oneof(
      fc.tuple(fc.constantFrom('svc_live_', 'svc_test_', 'svc_sess_'), hex(48)).map(([p, h]) => p + h),
      nearValidCredential,
      // A real key of one mode presented as the other, and a real key with one digit changed.
      fc
        .constantFrom('aliceTest', 'aliceLive')
        .chain((who) => fc.tuple(fc.constant(who), fc.nat(47), fc.constantFrom('swap-mode', 'flip-digit')))
        .map(([who, at, how]) => {
          const key = keys[who as Who];
          if (how === 'swap-mode')
            return key.replace(/^svc_(live|test)_/, (_, m) => `svc_${m === 'live' ? 'test' : 'live'}_`);
          const i = key.length - 48 + at;
          const digit = key[i] === '0' ? '1' : '0';
          return key.slice(0, i) + digit + key.slice(i + 1);
        }),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...secured), credential, async (endpoint, value) => {
        const req: FuzzRequest = {
          method: endpoint.method,
          endpoint,
          params: endpoint.params.map(() => ({ kind: 'real' as const, index: 0 })),
          query: '',
          auth: { kind: 'bearer', value },
          headers: { 'content-type': 'application/json' },
          body: endpoint.method === 'GET' || endpoint.method === 'DELETE' ? undefined : '{"title":"x"}',
        };
        const reply = await exchange(req);
        expect(reply.status, `${endpoint.method} ${endpoint.path} with ${value}: ${reply.text}`).toBe(401);
        expect(JSON.parse(reply.text).error.code).toBe('unauthorized');
      }),
      { numRuns: 300 },
    );
  }, 60_000);

  it("another account's key, or the other mode's, never reaches alice's objects", async () => {
    const withIds = endpoints.filter((e) => e.secured && e.params.length > 0);
    const lists = endpoints.filter((e) => e.secured && e.params.length === 0 && e.method === 'GET');
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...withIds, ...lists),
        fc.constantFrom<Who>('bobTest', 'aliceLive'),
        anyBody,
        async (endpoint, who, body) => {
          // Every path parameter names one of alice's test-mode objects (index 0 of each fixture list).
          const req: FuzzRequest = {
            method: endpoint.method,
            endpoint,
            params: endpoint.params.map(() => ({ kind: 'real' as const, index: 0 })),
            query: endpoint.path === '/v1/events' ? '?wait=0' : '',
            auth: { kind: 'key', who, scheme: 'Bearer ' },
            headers: { 'content-type': 'application/json' },
            body: endpoint.method === 'GET' ? undefined : body,
          };
          const path = resolvePath(req);
          const reply = await exchange(req);
          const what = `${endpoint.method} ${path} as ${who}: ${shorten(reply.text)}`;
          // A body over the limit is refused before anything is looked up, which reveals nothing either.
          const refusals = Buffer.byteLength(req.body ?? '') > BODY_LIMIT_BYTES ? [413] : [400, 404];
          if (endpoint.params.length > 0) expect(refusals, what).toContain(reply.status);
          const hidden = [
            aliceOwn.pause,
            aliceOwn.notification,
            aliceOwn.webhook,
            aliceOwn.delivery,
            aliceOwn.metadata,
          ];
          if (who === 'bobTest') hidden.push(alice.email, alice.id);
          for (const secret of hidden) {
            if (!path.includes(secret)) expect(reply.text.includes(secret), `${what} shows ${secret}`).toBe(false);
          }
        },
      ),
      { numRuns: 200 },
    );
  }, 60_000);
});

describe('response tokens', () => {
  it('any token that is not genuine is a 404 on /v1/respond/{token} and /r/{token}', async () => {
    const mutated = fc
      .tuple(
        fc.nat(2),
        fc.constantFrom('flip', 'truncate', 'extend', 'upper', 'swap-id', 'swap-mac', 'pad', 'dot'),
        fc.nat(80),
      )
      .map(([which, how, at]) => {
        const token = fixtures.token[which % fixtures.token.length] as string;
        const other = fixtures.token[(which + 1) % fixtures.token.length] as string;
        const [id, mac] = token.split('.') as [string, string];
        const i = at % token.length;
        switch (how) {
          case 'flip':
            return token.slice(0, i) + (token[i] === 'A' ? 'B' : 'A') + token.slice(i + 1);
          case 'truncate':
            return token.slice(0, i);
          case 'extend':
            return `${token}A`;
          case 'upper':
            return token.toUpperCase() === token ? token.toLowerCase() : token.toUpperCase();
          case 'swap-id':
            return `${other.split('.')[0]}.${mac}`;
          case 'swap-mac':
            return `${id}.${other.split('.')[1]}`;
          case 'pad':
            return `${token}=`;
          default:
            return `${id}..${mac}`;
        }
      })
      .filter((t) => !fixtures.token.includes(t));
    const token = fc.oneof(
      mutated,
      anyString.map((t) => wellFormed(scrubText(t))),
      fc
        .tuple(fc.stringMatching(/^pause_[0-9a-z]{26}$/), fc.base64String({ minLength: 43, maxLength: 44 }))
        .map(([id, mac]) => `${id}.${mac.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')}`),
    );
    const where = fc.constantFrom('GET /v1/respond/', 'POST /v1/respond/', 'GET /r/', 'POST /r/');
    await fc.assert(
      fc.asyncProperty(token, where, async (t, route) => {
        const [method, prefix] = route.split(' ') as [string, string];
        const path = `${prefix}${encodeURIComponent(t)}`;
        const headers: Record<string, string> =
          method === 'POST'
            ? { 'content-type': prefix === '/r/' ? 'application/x-www-form-urlencoded' : 'application/json' }
            : {};
        const body = method === 'POST' ? (prefix === '/r/' ? 'choice=approve' : '{"choice":"approve"}') : undefined;
        const reply = await send(method, path, headers, body);
        checkReply(method, path, headers, body, reply);
        expect(reply.status, `${method} ${path}: ${shorten(reply.text)}`).toBe(404);
      }),
      { numRuns: 300 },
    );
  }, 60_000);

  it('the response page escapes every value it shows, from the developer or from the link', async () => {
    const marked = fc
      .tuple(
        fc.stringMatching(/^[a-z]{8}$/),
        fc.oneof(
          anyString,
          fc.constantFrom(
            '<script>alert(1)</script>',
            '"><svg onload=alert(1)>',
            "'onmouseover='x",
            '</textarea><b>',
            '&lt;',
          ),
        ),
      )
      .map(([marker, s]) => ({ marker, text: `${marker}${wellFormed(scrubText(s))}${marker}` }));
    await fc.assert(
      fc.asyncProperty(
        marked.filter((m) => m.text.length <= 200),
        marked.filter((m) => m.text.length <= 100),
        marked,
        fc.boolean(),
        async (title, option, choice, preselectOption) => {
          const pause = await createPause(service.url, keys.aliceTest, {
            title: title.text,
            body: choice.text,
            options: [option.text, 'other'],
            allow_text: true,
          });
          const query = `?choice=${encodeURIComponent(preselectOption ? option.text : choice.text)}`;
          const path = `/r/${tokenOf(pause)}${query}`;
          const reply = await send('GET', path, {});
          checkReply('GET', path, {}, undefined, reply);
          expect(reply.status).toBe(200);
          for (const { marker } of [title, option, choice]) {
            const shown = reply.text.match(new RegExp(`${marker}[\\s\\S]*?${marker}`, 'g')) ?? [];
            expect(shown.length, `${marker} not shown`).toBeGreaterThan(0);
            for (const piece of shown) expect(piece, `unescaped in the page: ${piece}`).not.toMatch(/[<>"']/);
          }
        },
      ),
      { numRuns: 60 },
    );
  }, 60_000);
});

describe('raw HTTP', () => {
  it('malformed requests on the wire get a prompt 4xx, never a 5xx or silence', async () => {
    const { port } = new URL(service.url);
    const bytes = (unit: fc.Arbitrary<string>, maxLength: number) => fc.string({ unit, maxLength });
    const anyByte = fc.integer({ min: 0, max: 255 }).map((c) => String.fromCharCode(c));
    const visible = fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c));
    const requestLine = fc.record({
      method: fc.oneof(
        fc.constantFrom('GET', 'POST', 'DELETE', 'PUT', 'HEAD', 'OPTIONS', 'CONNECT', 'PRI', 'get'),
        bytes(visible, 8),
      ),
      target: fc.oneof(
        fc.constantFrom(
          '/health',
          '/v1/pause',
          '/v1/respond/x',
          '/r/x',
          '*',
          'http://evil.example/v1/pause',
          '//v1/pause',
          '/v1/../health',
        ),
        bytes(anyByte, 40).map((s) => `/v1/${s.replace(/[\r\n ]/g, '')}`),
      ),
      version: fc.constantFrom('HTTP/1.1', 'HTTP/1.1', 'HTTP/1.0', 'HTTP/2.0', 'HTTP/1.10', 'http/1.1', ''),
    });
    const header = fc.oneof(
      fc
        .tuple(fc.stringMatching(/^[A-Za-z-]{1,12}$/), bytes(anyByte, 30))
        .map(([n, v]) => `${n}: ${v.replace(/[\r\n]/g, '')}`),
      fc.constantFrom(
        'Content-Length: 5',
        'Content-Length: -1',
        'Content-Length: 1e3',
        'Transfer-Encoding: chunked',
        'Transfer-Encoding: gzip, chunked',
        'Authorization: Bearer \u0000',
        'X: a\u0000b',
        ' folded: header',
        'NoColon',
        ': empty-name',
        'Content-Type: application/json',
        'Host: a',
        'Host: b',
      ),
    );
    await fc.assert(
      fc.asyncProperty(
        requestLine,
        fc.array(header, { maxLength: 5 }),
        bytes(anyByte, 20),
        async (line, headers, tail) => {
          // Always a complete message: the server must answer it, not wait for more.
          const hasLength = headers.some((h) => /^content-length:/i.test(h) || /^transfer-encoding:/i.test(h));
          const message = `${line.method} ${line.target} ${line.version}\r\nHost: localhost\r\n${headers.join('\r\n')}${headers.length ? '\r\n' : ''}Connection: close\r\n\r\n${hasLength ? tail : ''}`;
          const answer = await new Promise<string>((resolve, reject) => {
            const socket = net.connect(Number(port), '127.0.0.1');
            let received = '';
            const timer = setTimeout(() => {
              socket.destroy();
              if (received.startsWith('HTTP/')) resolve(received);
              else reject(new Error(`no answer within ${ANSWER_WITHIN_MS} ms to ${JSON.stringify(message)}`));
            }, ANSWER_WITHIN_MS);
            socket.on('data', (chunk) => {
              received += chunk.toString('latin1');
              // The status line is all this property needs; the rest may keep the connection open.
              if (/\r\n\r\n/.test(received)) socket.destroy();
            });
            socket.on('close', () => {
              clearTimeout(timer);
              resolve(received);
            });
            socket.on('error', () => {});
            // Half-closing makes Node's server drop a request it is still working on, so a complete message is only
            // written; one whose framing may leave it incomplete is also ended, so that the server stops waiting.
            if (hasLength) socket.end(Buffer.from(message, 'latin1'));
            else socket.write(Buffer.from(message, 'latin1'));
          });
          // Silence (a prompt close) only for a message incomplete by its own framing (e.g. chunked with a short
          // tail), or for CONNECT, which Node's HTTP server closes when nothing listens for tunnels.
          if (answer === '') {
            expect(hasLength || line.method === 'CONNECT', `no answer at all to ${JSON.stringify(message)}`).toBe(true);
            return;
          }
          const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(answer)?.[1]);
          expect(status, `${JSON.stringify(message)} → ${JSON.stringify(answer.slice(0, 300))}`).toBeLessThan(500);
          for (const pattern of LEAKS) expect(answer, JSON.stringify(message)).not.toMatch(pattern);
        },
      ),
      { numRuns: 200 },
    );
  }, 60_000);
});
