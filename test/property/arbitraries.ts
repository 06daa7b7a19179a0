import fc from 'fast-check';
import ipaddr from 'ipaddr.js';

// Generators shared by the property tests: hostile strings and JSON, bodies
// shaped by the endpoints' own schemas, headers, and IP addresses in every
// notation a URL host may take.

/**
 * Removes U+0000 (raw or as a JSON escape). The service refuses it in any text
 * with 400 (PostgreSQL cannot store it), so generators whose property needs a
 * request to succeed leave it out; the others keep it.
 */
export function scrubText(text: string): string {
  return text.replaceAll('\u0000', '').replace(/\\u0000/gi, '');
}

/** The same for every string and key of a value. */
export function scrubValue<T>(value: T): T {
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return scrubText(v);
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) {
      const out: Record<string, unknown> = {};
      for (const [k, inner] of Object.entries(v)) {
        Object.defineProperty(out, scrubText(k), { value: walk(inner), enumerable: true, writable: true });
      }
      return out;
    }
    if (v && typeof v === 'object' && Object.getPrototypeOf(v) === null) {
      const out: Record<string, unknown> = Object.create(null);
      for (const [k, inner] of Object.entries(v)) out[scrubText(k)] = walk(inner);
      return out;
    }
    return v;
  };
  return walk(value) as T;
}

// ---------------------------------------------------------------------------
// Strings
// ---------------------------------------------------------------------------

/** Replaces lone surrogates (which URLs cannot carry) with U+FFFD; pairs stay. */
export const wellFormed = (s: string): string =>
  s.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');

const CONTROL = Array.from({ length: 32 }, (_, i) => String.fromCharCode(i)).concat(['\u007f', '\u0085', '\u2028']);

/** Strings that have broken parsers, databases and templates before. */
export const NASTY_STRINGS = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\ud800',
  '\udfff\ud800',
  '\uffff',
  '\ufeff',
  '\u202e',
  '🙂',
  'e\u0301',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  'null',
  'undefined',
  'true',
  'NaN',
  '-0',
  '1e309',
  '0x10',
  '%00',
  '%',
  '%zz',
  '%E0%A4%A',
  '../../../../etc/passwd',
  '..%2F..%2F',
  '<script>alert(1)</script>',
  '"><img src=x onerror=alert(1)>',
  "'; DROP TABLE pauses; --",
  "' OR '1'='1",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a template-injection probe, on purpose
  '${jndi:ldap://x}',
  '{{7*7}}',
  '\\',
  '\\u0000',
  '"',
  '\r\n',
  'approve',
  'reject',
  'pause_00000000000000000000000000',
  'pause_01m8ad2wevk7xw5mbnn4wab97e',
  'svc_live_',
  'svc_test_0000',
];

/** Any string: ASCII, full Unicode (lone surrogates included), control characters, or a nasty one. */
export const anyString: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }) },
  { weight: 1, arbitrary: fc.string({ unit: fc.constantFrom(...CONTROL), maxLength: 10 }) },
  { weight: 3, arbitrary: fc.constantFrom(...NASTY_STRINGS) },
  // A control character inside otherwise ordinary text.
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.string({ maxLength: 10 }), fc.constantFrom(...CONTROL), fc.string({ maxLength: 10 }))
      .map((p) => p.join('')),
  },
);

/** A long string: a short random piece repeated, 1 KB to ~200 KB. */
export const hugeString: fc.Arbitrary<string> = fc
  .tuple(fc.string({ unit: 'binary', minLength: 1, maxLength: 6 }), fc.integer({ min: 1_000, max: 200_000 }))
  .map(([piece, length]) => piece.repeat(Math.ceil(length / piece.length)).slice(0, length));

/** A string of exactly `length` characters or close to it: for limits like 200, 255, 10,000. */
export const stringNear = (length: number): fc.Arbitrary<string> =>
  fc
    .tuple(fc.constantFrom('x', 'é', '🙂', '\u0000', '<'), fc.integer({ min: -2, max: 2 }))
    .map(([c, d]) => c.repeat(Math.max(0, length + d)));

// ---------------------------------------------------------------------------
// JSON values and raw bodies
// ---------------------------------------------------------------------------

const hostileKey = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 12 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }) },
  { weight: 1, arbitrary: fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', '', '\u0000', 'a.b') },
);

/** Any JSON-able value, hostile keys and strings included. */
export const anyValue: fc.Arbitrary<unknown> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.anything({ key: hostileKey, values: [anyString, fc.integer(), fc.double(), fc.boolean()] }),
  },
  { weight: 2, arbitrary: fc.jsonValue() },
  { weight: 1, arbitrary: fc.object({ key: hostileKey, maxDepth: 3 }) },
  { weight: 1, arbitrary: anyString },
  { weight: 1, arbitrary: fc.constantFrom(null, true, false, 0, -1, 1.5, 1e308, -1e308, 2 ** 53 + 1, [], {}) },
);

/** `[[[…]]]`, `{"a":{"a":…}}` or a mix, `depth` levels deep, as JSON text. */
export function nested(depth: number, kind: 'array' | 'object' | 'mixed'): string {
  if (kind === 'array') return `${'['.repeat(depth)}${']'.repeat(depth)}`;
  if (kind === 'object') return `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
  let open = '';
  let close = '';
  for (let i = 0; i < depth; i++) {
    if (i % 2 === 0) {
      open += '[';
      close = `]${close}`;
    } else {
      open += '{"a":';
      close = `}${close}`;
    }
  }
  return `${open}0${close}`;
}

export const deepJson: fc.Arbitrary<string> = fc
  .tuple(
    // Far past the service's 64-level limit.
    fc.integer({ min: 1, max: 20_000 }),
    fc.constantFrom('array', 'object', 'mixed') as fc.Arbitrary<'array' | 'object' | 'mixed'>,
  )
  .map(([depth, kind]) => nested(depth, kind));

/** Raw JSON texts with __proto__ / constructor keys at various depths. */
export const pollutingJson: fc.Arbitrary<string> = fc.constantFrom(
  '{"__proto__":{"isAdmin":true}}',
  '{"title":"x","__proto__":{"title":"y"}}',
  '{"title":"x","metadata":{"__proto__":{"polluted":1}}}',
  '{"constructor":{"prototype":{"polluted":1}}}',
  '{"title":"x","metadata":{"constructor":{"prototype":{"polluted":1}}}}',
  '{"choice":"approve","__proto__":{"text":"x"}}',
  '[{"__proto__":1}]',
  '{"\\u005f_proto__":{}}',
  '{"__proto__":null}',
);

/** Bodies that are not JSON, or barely. */
export const brokenJson: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '{',
    '}',
    '[',
    '{"a":}',
    '{"a" 1}',
    "{'a':1}",
    '{"a":1,}',
    'NaN',
    'undefined',
    '\u0000',
    '\ufeff{}',
    '{"a":1}{"b":2}',
    '{"a":"\\ud800"}',
    '{"a":"\\x00"}',
    '0'.repeat(5000),
    '-',
    '1e999999',
  ),
  fc.string({ unit: 'binary', maxLength: 60 }),
);

/** The body of a request: a value as JSON, raw JSON text, garbage, deep nesting or a huge string. */
export const anyBody: fc.Arbitrary<string | Buffer | undefined> = fc.oneof(
  { weight: 2, arbitrary: fc.constant(undefined) },
  { weight: 6, arbitrary: anyValue.map((v) => JSON.stringify(scrubValue(v)) as string | undefined) },
  { weight: 2, arbitrary: fc.json().map(scrubText) },
  { weight: 2, arbitrary: brokenJson.map(scrubText) },
  { weight: 1, arbitrary: pollutingJson },
  { weight: 1, arbitrary: deepJson },
  { weight: 1, arbitrary: hugeString.map((s) => JSON.stringify(scrubText(s))) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes)) },
);

// ---------------------------------------------------------------------------
// Values shaped by a JSON schema (the OpenAPI document's own), mostly valid,
// sometimes of the wrong type, with extra fields now and then.
// ---------------------------------------------------------------------------

export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  format?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
}

/** Timestamps in the forms a date-time parser may meet. */
export const dateTimeString: fc.Arbitrary<string> = fc.oneof(
  fc.integer({ min: -3_600_000, max: 40 * 86_400_000 }).map((ahead) => new Date(Date.now() + ahead).toISOString()),
  fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
  fc.constantFrom(
    '2026-01-01t00:00:00z',
    '2026-01-01 00:00:00Z',
    '2026-01-01T00:00:00.123456789Z',
    '2026-01-01T00:00:00+14:00',
    '2026-01-01T00:00:00-23:59',
    '0000-01-01T00:00:00Z',
    '9999-12-31T23:59:59Z',
    '2026-02-29T00:00:00Z',
    '2026-13-01T00:00:00Z',
    '2026-01-01T24:00:00Z',
    '2026-01-01',
    'tomorrow',
    '',
  ),
  // Leap seconds, valid to ajv's date-time format and not to new Date().
  fc.constantFrom('2016-12-31T23:59:60Z', '2026-06-30T23:59:60Z', '2026-12-31T23:59:60.999Z'),
);

const wrongType: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(null, true, false, 0, -1, 1.5, '', 'true', '1', [], {}, [null], { a: 1 }),
  anyValue,
);

export interface SchemaOptions {
  /** Arbitraries for fields by name, offered beside the schema-derived ones. */
  fields?: Record<string, fc.Arbitrary<unknown>>;
}

export function valueFor(schema: JsonSchema, options: SchemaOptions = {}, depth = 0): fc.Arbitrary<unknown> {
  const derived = derive(schema, options, depth);
  return fc.oneof({ weight: 6, arbitrary: derived }, { weight: 1, arbitrary: wrongType });
}

function derive(schema: JsonSchema, options: SchemaOptions, depth: number): fc.Arbitrary<unknown> {
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives) return fc.oneof(...alternatives.map((s) => derive(s, options, depth)));
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
    case 'number': {
      const min = schema.minimum ?? -(2 ** 31);
      const max = schema.maximum ?? 2 ** 31;
      return fc.oneof(
        fc.integer({ min, max }),
        fc.constantFrom(min, max, min - 1, max + 1, 0, -1, 1.5, 2 ** 31, 2 ** 53, -(2 ** 53), 1e308),
      );
    }
    case 'string': {
      const min = schema.minLength ?? 0;
      const max = schema.maxLength ?? 300;
      const sized = anyString.filter((s) => s.length >= min && s.length <= max);
      const choices: fc.Arbitrary<unknown>[] = [sized, sized, stringNear(min), stringNear(max)];
      if (schema.format === 'email') {
        choices.push(
          fc.emailAddress(),
          fc.emailAddress(),
          fc.emailAddress().map((e) => e.toUpperCase()),
        );
      }
      if (schema.format === 'date-time') choices.push(dateTimeString, dateTimeString, dateTimeString);
      return fc.oneof(...choices).map((s) => (typeof s === 'string' ? scrubText(s) : s));
    }
    case 'array': {
      const items = schema.items ? valueFor(schema.items, options, depth + 1) : anyValue;
      const maxLength = Math.min((schema.maxItems ?? 5) + 1, 12);
      return fc.oneof(
        fc.array(items, { maxLength }),
        fc.array(items, { minLength: 1, maxLength: 2 }).map((a) => [...a, ...a]),
      );
    }
    case 'object': {
      if (!schema.properties || Object.keys(schema.properties).length === 0) {
        return fc.oneof(
          fc.object({ key: hostileKey, maxDepth: 3 }),
          fc.dictionary(hostileKey, anyValue, { maxKeys: 5 }),
        );
      }
      // Each optional field is there one time in three, so that a body often has only a few, valid, fields.
      const ABSENT = Symbol('absent');
      const fields: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [name, sub] of Object.entries(schema.properties)) {
        const own = options.fields?.[name];
        const value = own
          ? fc.oneof({ weight: 3, arbitrary: own }, { weight: 2, arbitrary: valueFor(sub, options, depth + 1) })
          : valueFor(sub, options, depth + 1);
        fields[name] = (schema.required ?? []).includes(name)
          ? fc.oneof({ weight: 9, arbitrary: value }, { weight: 1, arbitrary: fc.constant(ABSENT) })
          : fc.oneof({ weight: 1, arbitrary: value }, { weight: 2, arbitrary: fc.constant(ABSENT) });
      }
      const record = fc
        .record(fields)
        .map((r) => Object.fromEntries(Object.entries(r).filter(([, v]) => v !== ABSENT)));
      const extra = fc.dictionary(hostileKey, anyValue, { maxKeys: 2 });
      return fc.tuple(record, fc.integer({ min: 0, max: 9 }), extra).map(([value, roll, more]) => {
        const out: Record<string, unknown> = { ...value };
        // Now and then a field the schema does not know.
        if (roll === 0) Object.assign(out, more);
        return out;
      });
    }
    default:
      return anyValue;
  }
}

// ---------------------------------------------------------------------------
// Headers
// ---------------------------------------------------------------------------

/** A header value any HTTP client can send: tab, visible ASCII and Latin-1, no line breaks. */
export const headerValue: fc.Arbitrary<string> = fc
  .string({
    unit: fc.oneof(
      { weight: 8, arbitrary: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)) },
      { weight: 1, arbitrary: fc.integer({ min: 0x80, max: 0xff }).map((c) => String.fromCharCode(c)) },
      { weight: 1, arbitrary: fc.constant('\t') },
    ),
    maxLength: 80,
  })
  .map((s) => s.trim());

export const hex = (length: number) =>
  fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: length, maxLength: length });

/** Bearer credentials that look right: well-formed keys of unknown accounts, and near misses. */
export const nearValidCredential: fc.Arbitrary<string> = fc.oneof(
  fc.tuple(fc.constantFrom('svc_live_', 'svc_test_', 'svc_sess_'), hex(48)).map(([p, h]) => p + h),
  fc
    .tuple(fc.constantFrom('svc_live_', 'svc_test_', 'svc_sess_'), fc.constantFrom(0, 1, 47, 49, 96), fc.nat())
    .chain(([p, n]) => hex(n).map((h) => p + h)),
  fc
    .tuple(fc.constantFrom('svc_live_', 'svc_test_', 'SVC_LIVE_', 'svc_prod_', 'svc__', 'sk_live_'), hex(48))
    .map(([p, h]) => p + h.toUpperCase()),
  fc
    .tuple(fc.constantFrom('svc_live_', 'svc_test_'), hex(47), fc.constantFrom('g', 'G', ' ', '\u00e9', '_', '-'))
    .map(([p, h, c]) => p + h + c),
);

export const contentType: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 6, arbitrary: fc.constant('application/json') },
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      undefined,
      'application/json; charset=utf-8',
      'application/json; charset=latin1',
      'application/json; charset=utf-16',
      'APPLICATION/JSON',
      'application/json;;',
      'application/json; boundary=x',
      'application/jsonx',
      'application/vnd.api+json',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'text/plain',
      'text/html',
      'application/octet-stream',
      '*/*',
      ';',
      '',
    ),
  },
  { weight: 1, arbitrary: headerValue },
);

/** Idempotency keys of every length around the 255 limit, and far beyond it. */
export const idempotencyKey: fc.Arbitrary<string> = fc.oneof(
  headerValue,
  fc.integer({ min: 0, max: 300 }).map((n) => 'k'.repeat(n)),
  fc.constantFrom(254, 255, 256, 1000, 8000).map((n) => 'é'.repeat(n)),
);

const FORBIDDEN_HEADER_NAMES = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'expect',
  'te',
  'trailer',
  'proxy-connection',
]);

/** A few extra headers with random names and values. */
export const extraHeaders: fc.Arbitrary<Record<string, string>> = fc.dictionary(
  fc
    .oneof(
      fc.stringMatching(/^[a-z][a-z0-9-]{0,15}$/),
      fc.constantFrom(
        'x-forwarded-for',
        'x-request-id',
        'accept',
        'accept-encoding',
        'cookie',
        'origin',
        'referer',
        'range',
        'if-none-match',
        'x-http-method-override',
        'content-encoding',
        'payment-signature',
        'idempotency-key',
      ),
    )
    .filter((name) => !FORBIDDEN_HEADER_NAMES.has(name)),
  headerValue,
  { maxKeys: 3 },
);

// ---------------------------------------------------------------------------
// Query strings and path segments
// ---------------------------------------------------------------------------

/** One path segment: percent-encoded text, raw special forms, or (rarely) over the 512-character parameter limit. */
export const pathSegment: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: anyString.map((s) => encodeURIComponent(wellFormed(scrubText(s)))) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '.',
      '..',
      '%2e%2e',
      '%2F',
      '%5C',
      '~',
      '*',
      '%20',
      "'",
      '(',
      'pause_',
      'x'.repeat(64),
      'x'.repeat(65),
      'x'.repeat(512),
    ),
  },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom('%', '%zz', '%E0%A4%A', '%ff', 'x'.repeat(513), 'é'.repeat(300))
      .map((s) => (s.startsWith('é') ? encodeURIComponent(s) : s)),
  },
);

/** A query string of random and known parameters; ?wait= only with values that cannot make a request wait long. */
export function queryString(knownNames: string[]): fc.Arbitrary<string> {
  const name = fc.oneof(
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        ...knownNames,
        'status',
        'limit',
        'starting_after',
        'mode',
        'since',
        'choice',
        'answered',
        'wait',
      ),
    },
    { weight: 1, arbitrary: anyString },
    { weight: 1, arbitrary: fc.constantFrom('__proto__', 'constructor', 'a[b]', 'status[]', 'limit[0]') },
  );
  const value = fc.oneof(
    { weight: 3, arbitrary: anyString },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        '0',
        '1',
        '-1',
        '20',
        '100',
        '101',
        '1.5',
        '1e2',
        '0x10',
        ' 1',
        'live',
        'test',
        'pending',
        'responded',
        'timed_out',
        'cancelled',
        'true',
        '',
      ),
    },
    { weight: 1, arbitrary: dateTimeString },
  );
  const pair = fc
    .tuple(name, value, fc.boolean())
    .filter(([n, v]) => n !== 'wait' || !(Number(v) > 1 && Number(v) <= 60))
    .map(([n, v, encoded]) => {
      const clean = (s: string) => wellFormed(scrubText(s));
      return encoded
        ? `${encodeURIComponent(clean(n))}=${encodeURIComponent(clean(v))}`
        : `${encodeURIComponent(clean(n))}=${clean(v).replace(/[^\x21-\x7e]|[#%]/gu, encodeURIComponent)}`;
    });
  return fc.oneof(
    { weight: 2, arbitrary: fc.constant('') },
    { weight: 5, arbitrary: fc.array(pair, { minLength: 1, maxLength: 4 }).map((pairs) => `?${pairs.join('&')}`) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '?',
        '?&',
        '?=',
        '?a',
        '?%',
        '?a=%zz',
        '?wait=abc',
        '?wait=61',
        '?wait=-1',
        '?limit=1&limit=2',
      ),
    },
  );
}

/** Whole seconds a query may legitimately make the request wait (?wait=N). */
export function waitSeconds(path: string): number {
  const query = path.split('?')[1] ?? '';
  let longest = 0;
  for (const pair of query.split('&')) {
    const [name, value = ''] = pair.split('=');
    let n = Number.NaN;
    try {
      n = decodeURIComponent(name ?? '') === 'wait' ? Number(decodeURIComponent(value)) : Number.NaN;
    } catch {}
    if (Number.isFinite(n) && n > 0) longest = Math.max(longest, Math.min(n, 60));
  }
  return longest;
}

// ---------------------------------------------------------------------------
// IP addresses
// ---------------------------------------------------------------------------

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

function rangesOf(kind: 'ipv4' | 'ipv6'): { name: string; range: Range }[] {
  const table = (kind === 'ipv4' ? ipaddr.IPv4.prototype : ipaddr.IPv6.prototype) as unknown as {
    SpecialRanges: Record<string, Range | Range[]>;
  };
  const out: { name: string; range: Range }[] = [];
  for (const [name, value] of Object.entries(table.SpecialRanges)) {
    const list = (Array.isArray(value[0]) ? value : [value]) as Range[];
    for (const range of list) out.push({ name, range });
  }
  return out;
}

/** Every special range ipaddr.js knows, as [network, prefix length], by family. */
export const SPECIAL_V4 = rangesOf('ipv4');
export const SPECIAL_V6 = rangesOf('ipv6');

const v4ToInt = (a: ipaddr.IPv4) => a.octets.reduce((n, o) => n * 256 + o, 0);
export const intToV4 = (n: number) => new ipaddr.IPv4([(n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255]);

const v6ToBig = (a: ipaddr.IPv6) => a.parts.reduce((n, p) => (n << 16n) | BigInt(p), 0n);
export const bigToV6 = (n: bigint) =>
  new ipaddr.IPv6(Array.from({ length: 8 }, (_, i) => Number((n >> BigInt(16 * (7 - i))) & 0xffffn)));

/** An IPv4 address inside a special range, at its edges, or just outside them. */
export const specialV4: fc.Arbitrary<ipaddr.IPv4> = fc
  .tuple(
    fc.constantFrom(...SPECIAL_V4.filter((r) => r.range[0].kind() === 'ipv4')),
    fc.nat(),
    fc.constantFrom('inside', 'first', 'last', 'before', 'after'),
  )
  .map(([{ range }, offset, where]) => {
    const base = v4ToInt(range[0] as ipaddr.IPv4);
    const size = 2 ** (32 - range[1]);
    const start = base - (base % size);
    const at = {
      inside: start + (offset % size),
      first: start,
      last: start + size - 1,
      before: start - 1,
      after: start + size,
    }[where];
    return intToV4(((at % 2 ** 32) + 2 ** 32) % 2 ** 32);
  });

/** An IPv6 address inside a special range, at its edges, or just outside them. */
export const specialV6: fc.Arbitrary<ipaddr.IPv6> = fc
  .tuple(
    fc.constantFrom(...SPECIAL_V6),
    fc.bigInt({ min: 0n, max: (1n << 128n) - 1n }),
    fc.constantFrom('inside', 'first', 'last', 'before', 'after'),
  )
  .map(([{ range }, offset, where]) => {
    const size = 1n << BigInt(128 - range[1]);
    const start = v6ToBig(range[0] as ipaddr.IPv6) & ~(size - 1n);
    const at = {
      inside: start + (offset % size),
      first: start,
      last: start + size - 1n,
      before: start - 1n,
      after: start + size,
    }[where];
    const max = 1n << 128n;
    return bigToV6(((at % max) + max) % max);
  });

/** Any IPv4 address, with special ranges over-represented. */
export const anyV4: fc.Arbitrary<ipaddr.IPv4> = fc.oneof(
  fc.ipV4().map((s) => ipaddr.IPv4.parse(s)),
  specialV4,
  fc
    .constantFrom(
      '0.0.0.0',
      '127.0.0.1',
      '169.254.169.254',
      '10.0.0.1',
      '100.64.0.1',
      '255.255.255.255',
      '8.8.8.8',
      '1.1.1.1',
      '93.184.215.14',
    )
    .map((s) => ipaddr.IPv4.parse(s)),
);

/** Any IPv6 address, with special ranges and embedded IPv4 forms over-represented. */
export const anyV6: fc.Arbitrary<ipaddr.IPv6> = fc.oneof(
  fc.ipV6().map((s) => ipaddr.IPv6.parse(s)),
  specialV6,
  anyV4.map((v4) => v4.toIPv4MappedAddress()),
  anyV4.map((v4) => bigToV6(BigInt(v4ToInt(v4)))), // IPv4-compatible ::a.b.c.d
  anyV4.map((v4) => bigToV6((0x0064ff9bn << 96n) | BigInt(v4ToInt(v4)))), // NAT64
  anyV4.map((v4) => bigToV6((0x2002n << 112n) | (BigInt(v4ToInt(v4)) << 80n))), // 6to4
  fc
    .constantFrom('::', '::1', '2606:4700:4700::1111', '2001:4860:4860::8888', 'fe80::1', 'ff02::1', 'fd00::1')
    .map((s) => ipaddr.IPv6.parse(s)),
);

/**
 * The documented rule (docs/webhooks.md: `url`), written independently of
 * src/net/address-policy.ts: public when ipaddr.js classes it `unicast` and it
 * lies outside ::/8, IPv4-mapped and IPv4-compatible addresses being judged as
 * the IPv4 address they carry.
 */
export function isPublicByDesign(address: ipaddr.IPv4 | ipaddr.IPv6): boolean {
  if (address.kind() === 'ipv4') return address.range() === 'unicast';
  const v6 = address as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().range() === 'unicast';
  const [a = 0, b = 0, c = 0, d = 0, e = 0, f = 0, g = 0, h = 0] = v6.parts;
  if (a === 0 && b === 0 && c === 0 && d === 0 && e === 0 && f === 0) {
    return new ipaddr.IPv4([g >> 8, g & 255, h >> 8, h & 255]).range() === 'unicast';
  }
  if (a >> 8 === 0) return false;
  return v6.range() === 'unicast';
}

// IPv4 hosts in every notation the WHATWG URL parser reads as that address.

const radix = (n: number, how: 'dec' | 'hex' | 'HEX' | 'oct' | 'zeros'): string => {
  switch (how) {
    case 'dec':
      return String(n);
    case 'hex':
      return `0x${n.toString(16)}`;
    case 'HEX':
      return `0X${n.toString(16).toUpperCase()}`;
    case 'oct':
      return `0${n.toString(8)}`;
    case 'zeros':
      return `0x000${n.toString(16)}`;
  }
};
const RADIXES = ['dec', 'hex', 'HEX', 'oct', 'zeros'] as const;

/** `address` written as 1 to 4 parts, each in decimal, hex or octal, maybe with a root dot, maybe percent-encoded or in full-width digits. */
export function v4Notation(address: ipaddr.IPv4): fc.Arbitrary<string> {
  const [a = 0, b = 0, c = 0, d = 0] = address.octets;
  const parts = {
    1: [v4ToInt(address)],
    2: [a, b * 65536 + c * 256 + d],
    3: [a, b, c * 256 + d],
    4: [a, b, c, d],
  } as const;
  return fc
    .record({
      count: fc.constantFrom(1, 2, 3, 4, 4, 4),
      radixes: fc.array(fc.constantFrom(...RADIXES), { minLength: 4, maxLength: 4 }),
      rootDot: fc.boolean(),
      dress: fc.constantFrom('plain', 'plain', 'plain', 'percent', 'fullwidth', 'ideographic-dot'),
    })
    .map(({ count, radixes, rootDot, dress }) => {
      let text = parts[count as 1 | 2 | 3 | 4].map((n, i) => radix(n, radixes[i] ?? 'dec')).join('.');
      if (rootDot) text += '.';
      if (dress === 'percent')
        text = [...text].map((ch) => `%${ch.charCodeAt(0).toString(16).padStart(2, '0')}`).join('');
      if (dress === 'fullwidth') text = text.replace(/[0-9]/g, (ch) => String.fromCharCode(0xff10 + Number(ch)));
      if (dress === 'ideographic-dot') text = text.replaceAll('.', '\u3002');
      return text;
    });
}

/** `address` as a bracketed IPv6 host: compressed, full, zero-padded, upper case, or with a dotted IPv4 tail. */
export function v6Notation(address: ipaddr.IPv6): fc.Arbitrary<string> {
  const parts = address.parts;
  const full = parts.map((p) => p.toString(16)).join(':');
  const padded = parts.map((p) => p.toString(16).padStart(4, '0')).join(':');
  const g = parts[6] ?? 0;
  const h = parts[7] ?? 0;
  const tail = `${g >> 8}.${g & 255}.${h >> 8}.${h & 255}`;
  const withDottedTail = `${parts
    .slice(0, 6)
    .map((p) => p.toString(16))
    .join(':')}:${tail}`;
  const forms = [address.toString(), full, padded, withDottedTail, address.toString().replace(/^0:0:0:0:0:/, '::')];
  return fc
    .tuple(fc.constantFrom(...forms), fc.boolean())
    .map(([form, upper]) => `[${upper ? form.toUpperCase() : form}]`);
}
