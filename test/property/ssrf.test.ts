import fc from 'fast-check';
import ipaddr from 'ipaddr.js';
import { describe, expect, it } from 'vitest';
import type { Cidr } from '../../src/config.js';
import { checkWebhookUrl, isPublicAddress, parseAddress } from '../../src/net/address-policy.js';
import {
  anyString,
  anyV4,
  anyV6,
  bigToV6,
  intToV4,
  isPublicByDesign,
  SPECIAL_V4,
  SPECIAL_V6,
  v4Notation,
  v6Notation,
  wellFormed,
} from './arbitraries.js';

// The SSRF guard against an oracle written from the design's words: an
// address is public when ipaddr.js classes it `unicast` and it lies outside
// ::/8, IPv4-mapped and IPv4-compatible addresses being judged as the IPv4
// address they carry (isPublicByDesign). The guard must agree with it on
// every address, and must never accept a URL whose host is a non-public
// address in any notation the WHATWG URL parser reads, or a name resolving to
// one. Pure: the resolver is injected.

const RUNS = 1000;
type Address = ipaddr.IPv4 | ipaddr.IPv6;

/** A resolver over a fixed table; any other name does not resolve. */
const tableResolver = (table: Record<string, string[]>) => async (host: string) => {
  const answer = table[host];
  if (answer === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return answer;
};
const noNames = tableResolver({});
const check = (url: string, resolve = noNames, allowedNetworks: Cidr[] = []) =>
  checkWebhookUrl(url, { allowedNetworks, resolve, resolveTimeoutMs: 1000 });

const anyAddress: fc.Arbitrary<Address> = fc.oneof(anyV4, anyV6);

/** The spellings a resolver may hand back for an address: standard notations only. */
const resolverSpelling = (address: Address): fc.Arbitrary<string> => {
  if (address.kind() === 'ipv4') return fc.constant(address.toString());
  const v6 = address as ipaddr.IPv6;
  const padded = v6.parts.map((p) => p.toString(16).padStart(4, '0')).join(':');
  const forms = [v6.toString(), v6.toNormalizedString(), padded, v6.toString().toUpperCase()];
  if (v6.isIPv4MappedAddress()) forms.push(`::ffff:${v6.toIPv4Address().toString()}`);
  return fc.constantFrom(...forms);
};

const urlAround = (host: string) =>
  fc
    .record({
      port: fc.option(fc.integer({ min: 1, max: 65535 }), { nil: undefined }),
      path: fc.constantFrom('/', '/hook', '/a/b?c=d', '/%2e%2e/', '#frag', ''),
    })
    .map(({ port, path }) => `https://${host}${port === undefined ? '' : `:${port}`}${path}`);

describe('isPublicAddress agrees with ipaddr.js', () => {
  it('on random and special IPv4 addresses', () => {
    fc.assert(
      fc.property(anyV4, (address) => {
        expect(isPublicAddress(address.toString(), [])).toBe(isPublicByDesign(address));
      }),
      { numRuns: RUNS },
    );
  });

  it('on random and special IPv6 addresses, in every standard spelling', () => {
    fc.assert(
      fc.property(
        anyV6.chain((a) => fc.tuple(fc.constant(a), resolverSpelling(a))),
        ([address, spelling]) => {
          expect(isPublicAddress(spelling, [])).toBe(isPublicByDesign(address));
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('never accepts an address ipaddr.js classes as anything but unicast (embedded IPv4 judged as itself)', () => {
    fc.assert(
      fc.property(anyAddress, (address) => {
        if (!isPublicAddress(address.toString(), [])) return;
        if (address.kind() === 'ipv4') {
          expect(address.range()).toBe('unicast');
          return;
        }
        const v6 = address as ipaddr.IPv6;
        const [a = 0, b = 0, c = 0, d = 0, e = 0, f = 0, g = 0, h = 0] = v6.parts;
        const carriesV4 = a === 0 && b === 0 && c === 0 && d === 0 && e === 0 && (f === 0 || f === 0xffff);
        if (carriesV4) {
          expect(new ipaddr.IPv4([g >> 8, g & 255, h >> 8, h & 255]).range()).toBe('unicast');
        } else {
          expect(v6.range()).toBe('unicast');
          expect(a >> 8).not.toBe(0);
        }
      }),
      { numRuns: RUNS },
    );
  });

  it('refuses every address of every special range ipaddr.js knows', () => {
    const inside = fc.oneof(
      fc.tuple(fc.constantFrom(...SPECIAL_V4), fc.nat()).map(([{ range }, offset]) => {
        const size = 2 ** (32 - range[1]);
        const base = (range[0] as ipaddr.IPv4).octets.reduce((n, o) => n * 256 + o, 0);
        return intToV4(base - (base % size) + (offset % size)) as Address;
      }),
      fc
        .tuple(fc.constantFrom(...SPECIAL_V6), fc.bigInt({ min: 0n, max: (1n << 128n) - 1n }))
        .filter(([{ name }]) => name !== 'ipv4Mapped') // judged by the IPv4 it carries
        .map(([{ range }, offset]) => {
          const size = 1n << BigInt(128 - range[1]);
          const base = (range[0] as ipaddr.IPv6).parts.reduce((n, p) => (n << 16n) | BigInt(p), 0n);
          return bigToV6((base & ~(size - 1n)) + (offset % size)) as Address;
        }),
    );
    fc.assert(
      fc.property(inside, (address) => {
        expect(isPublicAddress(address.toString(), [])).toBe(false);
      }),
      { numRuns: RUNS },
    );
  });

  it('accepts only strings that are standard address notations of a public address', () => {
    const text = fc.oneof(
      anyString,
      anyAddress.map((a) => a.toString()),
      anyV4.chain(v4Notation),
      anyV6.chain(v6Notation),
      anyAddress.map(
        (a) => `${a.toString()}${['%eth0', '%25', ' ', '\n', '.', ':80', '/32'][a.toString().length % 7]}`,
      ),
    );
    fc.assert(
      fc.property(text, (candidate) => {
        if (!isPublicAddress(candidate, [])) return;
        const parsed = parseAddress(candidate);
        expect(parsed).toBeDefined();
        expect(isPublicByDesign(parsed as Address)).toBe(true);
        // Never a short, hex or octal IPv4 form: those are for URL hosts, which the WHATWG parser normalises first.
        if (parsed?.kind() === 'ipv4') expect(candidate).toBe(parsed.toString());
      }),
      { numRuns: RUNS },
    );
  });

  it('an allowed network exempts exactly its own addresses', () => {
    const network = fc.oneof(
      anyV4.chain((a) => fc.integer({ min: 8, max: 32 }).map((bits) => [a, bits] as Cidr)),
      anyV6.chain((a) => fc.integer({ min: 16, max: 128 }).map((bits) => [a, bits] as Cidr)),
    );
    fc.assert(
      fc.property(anyAddress, network, (address, cidr) => {
        const [net, bits] = cidr;
        const inNetwork = (a: Address) => a.kind() === net.kind() && a.match(net, bits);
        let carried: ipaddr.IPv4 | undefined;
        if (address.kind() === 'ipv6') {
          const [a = 0, b = 0, c = 0, d = 0, e = 0, f = 0, g = 0, h = 0] = (address as ipaddr.IPv6).parts;
          if (a === 0 && b === 0 && c === 0 && d === 0 && e === 0 && (f === 0 || f === 0xffff)) {
            carried = new ipaddr.IPv4([g >> 8, g & 255, h >> 8, h & 255]);
          }
        }
        const expected =
          isPublicByDesign(address) || inNetwork(address) || (carried !== undefined && inNetwork(carried));
        expect(isPublicAddress(address.toString(), [cidr])).toBe(expected);
      }),
      { numRuns: RUNS },
    );
  });
});

describe('checkWebhookUrl never reaches a non-public address', () => {
  it('IPv4 hosts in any notation (dotted, integer, hex, octal, short, percent-encoded, full-width) are judged as the address', async () => {
    await fc.assert(
      fc.asyncProperty(
        anyV4.chain((a) => fc.tuple(fc.constant(a), v4Notation(a).chain(urlAround))),
        async ([address, url]) => {
          expect(new URL(url).hostname, url).toBe(address.toString());
          const result = await check(url);
          expect(result.ok, url).toBe(isPublicByDesign(address));
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('IPv6 hosts in any notation (compressed, full, padded, upper case, dotted tail, mapped, compatible) are judged as the address', async () => {
    await fc.assert(
      fc.asyncProperty(
        anyV6.chain((a) => fc.tuple(fc.constant(a), v6Notation(a).chain(urlAround))),
        async ([address, url]) => {
          const result = await check(url);
          expect(result.ok, url).toBe(isPublicByDesign(address));
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('a name is accepted only when every address it resolves to is public', async () => {
    const answers = fc.array(
      anyAddress.chain((a) => fc.tuple(fc.constant(a), resolverSpelling(a))),
      { minLength: 0, maxLength: 4 },
    );
    const name = fc.constantFrom(
      'hooks.example.com',
      'a-b.example.org',
      'xn--bcher-kva.example',
      'deep.sub.domain.test',
      'HOOKS.Example.COM.',
    );
    await fc.assert(
      fc.asyncProperty(name, answers, fc.constantFrom('/', '/hook'), async (host, resolved, path) => {
        const normalised = new URL(`https://${host}/`).hostname;
        const resolve = tableResolver({ [normalised]: resolved.map(([, spelling]) => spelling) });
        const result = await check(`https://${host}${path}`, resolve);
        const expected = resolved.length > 0 && resolved.every(([address]) => isPublicByDesign(address));
        expect(result.ok, JSON.stringify(resolved.map(([, s]) => s))).toBe(expected);
      }),
      { numRuns: RUNS },
    );
  });

  it('localhost in any spelling is refused without a look-up', async () => {
    const spelling = fc.constantFrom(
      'localhost',
      'LOCALHOST',
      'LocalHost.',
      'a.localhost',
      'x.y.LOCALHOST.',
      '\u24db\u24de\u24d2\u24d0\u24db\u24d7\u24de\u24e2\u24e3', // circled letters, mapped to "localhost"
      '\uff4c\uff4f\uff43\uff41\uff4c\uff48\uff4f\uff53\uff54', // full-width
      'localhost%2e',
      '%6c%6f%63%61%6c%68%6f%73%74',
    );
    const publicEverywhere = async () => ['93.184.215.14'];
    await fc.assert(
      fc.asyncProperty(spelling.chain(urlAround), async (url) => {
        expect((await check(url, publicEverywhere)).ok, url).toBe(false);
      }),
      { numRuns: 200 },
    );
  });

  it('any URL it accepts is https, has no user info, and only public addresses behind its host', async () => {
    const host = fc.oneof(
      anyV4.chain(v4Notation),
      anyV6.chain(v6Notation),
      fc.domain(),
      fc.constantFrom(
        'localhost',
        '0',
        '0x',
        '127.1',
        '[::]',
        '[::1]',
        'example.com',
        'user@example.com',
        'a..b',
        '-a.com',
        '_dmarc.example.com',
      ),
      anyString.map((s) => encodeURIComponent(wellFormed(s))),
    );
    const rawUrl = fc.oneof(
      fc
        .tuple(
          fc.constantFrom(
            'https://',
            'http://',
            'HTTPS://',
            'https:/',
            'https:\\\\',
            'ftp://',
            ' https://',
            'https://user:pw@',
          ),
          host,
          fc.constantFrom('', '/', ':0/', ':443/', ':65536/', '/x?y#z'),
        )
        .map((parts) => parts.join('')),
      fc.webUrl({ validSchemes: ['https', 'http'], withQueryParameters: true, withFragments: true }),
    );
    // Every name resolves to a random mix: the guard must look at all of them.
    const answers = fc.array(anyAddress, { minLength: 1, maxLength: 3 });
    await fc.assert(
      fc.asyncProperty(rawUrl, answers, async (raw, resolved) => {
        const resolve = async () => resolved.map((a) => a.toString());
        const result = await check(raw, resolve);
        if (!result.ok) return;
        const url = new URL(raw);
        expect(url.protocol).toBe('https:');
        expect(url.username + url.password).toBe('');
        const bare = url.hostname.replace(/^\[|\]$/g, '');
        if (ipaddr.isValid(bare) && /^[0-9a-f:.]+$/i.test(bare)) {
          expect(isPublicByDesign(ipaddr.parse(bare)), raw).toBe(true);
        } else {
          expect(resolved.every(isPublicByDesign), raw).toBe(true);
        }
      }),
      { numRuns: RUNS },
    );
  });
});
