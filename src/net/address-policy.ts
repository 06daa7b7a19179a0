// Which outbound destinations pausepoint may reach (docs/webhooks.md:
// the `url` rule).
//
// Pure rules, shared by registration (POST /v1/webhooks, notify.slack_webhook_url)
// and by the SSRF-safe client, which applies isPublicAddress again at connect
// time so that DNS rebinding cannot reach a private address.
//
// An address is public when ipaddr.js classes it `unicast` and it lies outside
// ::/8; IPv4-mapped (::ffff:a.b.c.d) and IPv4-compatible (::a.b.c.d) IPv6
// addresses are judged as the IPv4 address they carry. Every other special
// range ipaddr.js knows (loopback, private, link-local incl. 169.254.169.254,
// CGNAT, multicast, broadcast, reserved/documentation, unspecified, unique-local,
// NAT64, 6to4, Teredo, ...) is refused. An address inside one of the
// WEBHOOK_ALLOWED_NETWORKS CIDRs passes regardless.
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { Cidr } from '../config.js';
import { isLocalhostName, MAX_URL_LENGTH } from '../domain/hosts.js';

export type Resolver = (host: string) => Promise<string[]>;

export type UrlCheck = { ok: true; url: URL } | { ok: false; reason: string };

export interface UrlCheckOptions {
  allowedNetworks: Cidr[];
  /** Resolves a host name to every address it has (A and AAAA). Defaults to resolveHost. */
  resolve?: Resolver;
  /** Only https: URLs (the default and the rule for webhooks and Slack); false also admits http:. */
  requireHttps?: boolean;
  /** Said after the refusal of a loopback destination; default LOCAL_TESTING_HINT (for webhooks). */
  loopbackHint?: string;
  /** Give up on a look-up after this long (default 5000 ms). */
  resolveTimeoutMs?: number;
}

/** The addresses `localhost` and `*.localhost` stand for; they are never looked up (RFC 6761). */
export const LOOPBACK_ADDRESSES: readonly string[] = ['127.0.0.1', '::1'];

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/** Parses an IP address in a standard notation (dotted-quad IPv4 or IPv6, brackets allowed); undefined if it is none. */
export function parseAddress(address: string): Address | undefined {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  // net.isIP accepts only the strict notations; ipaddr.parse alone would also
  // take the short, octal and hex IPv4 forms, which a resolver never returns.
  if (isIP(bare) === 0) return undefined;
  try {
    return ipaddr.parse(bare);
  } catch {
    return undefined;
  }
}

/** The IPv4 address an IPv4-mapped (::ffff:0:0/96) or IPv4-compatible (::/96) IPv6 address carries. */
function embeddedIPv4(address: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  const p = address.parts;
  const high80Zero = p[0] === 0 && p[1] === 0 && p[2] === 0 && p[3] === 0 && p[4] === 0;
  if (!high80Zero || (p[5] !== 0xffff && p[5] !== 0)) return undefined;
  const [a, b] = [p[6] ?? 0, p[7] ?? 0];
  return new ipaddr.IPv4([a >> 8, a & 0xff, b >> 8, b & 0xff]);
}

function inAllowedNetwork(address: Address, allowed: Cidr[]): boolean {
  return allowed.some(([network, bits]) => network.kind() === address.kind() && address.match(network, bits));
}

/**
 * True when `address` (a literal in standard notation) may be contacted: it is
 * public, or inside one of `allowed`. Anything that is not an IP address is false.
 */
export function isPublicAddress(address: string, allowed: Cidr[]): boolean {
  const parsed = parseAddress(address);
  if (parsed === undefined) return false;
  if (inAllowedNetwork(parsed, allowed)) return true;
  if (parsed.kind() === 'ipv4') return parsed.range() === 'unicast';
  const v6 = parsed as ipaddr.IPv6;
  const carried = embeddedIPv4(v6);
  if (carried !== undefined) {
    return inAllowedNetwork(carried, allowed) || carried.range() === 'unicast';
  }
  if (((v6.parts[0] ?? 0) & 0xff00) === 0) return false; // ::/8
  return v6.range() === 'unicast';
}

/**
 * The addresses of `localhost` that may be contacted: those of LOOPBACK_ADDRESSES
 * that `allowed` admits. A connection goes to these only, so allowing 127.0.0.0/8
 * alone admits localhost (over IPv4).
 */
export function allowedLocalhostAddresses(allowed: Cidr[]): string[] {
  return LOOPBACK_ADDRESSES.filter((address) => isPublicAddress(address, allowed));
}

function isLoopback(address: string): boolean {
  const parsed = parseAddress(address);
  if (parsed === undefined) return false;
  if (parsed.range() === 'loopback') return true;
  return parsed.kind() === 'ipv6' && embeddedIPv4(parsed as ipaddr.IPv6)?.range() === 'loopback';
}

/** Said after a refusal of a loopback destination: the ways to reach a receiver on this machine. */
export const LOCAL_TESTING_HINT =
  'To test a receiver on your machine, run `pausepoint listen --forward-to URL` (it forwards your events, signed, to any local URL), ' +
  'or let the service reach loopback with WEBHOOK_ALLOWED_NETWORKS=127.0.0.0/8,::1/128.';

const withHint = (reason: string, hint: string) => (hint ? `${reason} ${hint}` : reason);

/** Every address a name resolves to, A and AAAA, as the system resolver sees it (getaddrinfo). */
export const resolveHost: Resolver = async (host) => {
  const answers = await lookup(host, { all: true, verbatim: true });
  return answers.map((answer) => answer.address);
};

// A host name as the WHATWG parser leaves it (lower-case, IDN already in
// xn-- form): dot-separated labels of letters, digits, '-' and '_', 1 to 63
// characters each, not starting or ending with '-', at most 253 characters,
// with an optional root dot.
const LABEL = /^(?!-)[a-z0-9_-]{1,63}(?<!-)$/;

function isDnsName(host: string): boolean {
  const name = host.endsWith('.') ? host.slice(0, -1) : host;
  if (name.length === 0 || name.length > 253) return false;
  return name.split('.').every((label) => LABEL.test(label));
}

/** The address literal a WHATWG-normalised URL host stands for, or undefined for a name. */
export function hostLiteral(hostname: string): string | undefined {
  const bare = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
  return isIP(bare) === 0 ? undefined : bare;
}

/**
 * The registration rule for outbound URLs (webhooks and Slack): an absolute
 * https:// URL of at most 2,048 characters, without user info, port 1–65535,
 * whose host (as the WHATWG URL parser reads it, so 127.1 and 0x7f000001 are
 * 127.0.0.1) is a valid DNS name or IP literal, and every address of which is
 * public. Names that do not resolve are refused. Reasons never repeat the URL,
 * which may carry a secret (Slack URLs do).
 */
export async function checkWebhookUrl(raw: string, opts: UrlCheckOptions): Promise<UrlCheck> {
  const allowed = opts.allowedNetworks;
  const hint = opts.loopbackHint ?? LOCAL_TESTING_HINT;
  const notPublic = (address: string, reason: string) => (isLoopback(address) ? withHint(reason, hint) : reason);
  const protocols = opts.requireHttps === false ? ['https:', 'http:'] : ['https:'];
  const schemes = protocols.map((p) => `${p}//`).join(' or ');

  if (typeof raw !== 'string' || raw.length === 0) return { ok: false, reason: 'The URL is empty.' };
  if (raw.length > MAX_URL_LENGTH) {
    return { ok: false, reason: `The URL is longer than ${MAX_URL_LENGTH} characters.` };
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: `The URL is not a valid absolute ${schemes} URL.` };
  }
  if (!protocols.includes(url.protocol)) return { ok: false, reason: `The URL must start with ${schemes}.` };
  if (url.username !== '' || url.password !== '') {
    return { ok: false, reason: 'The URL must not contain a user name or password.' };
  }
  if (url.port === '0') return { ok: false, reason: 'The URL port must be between 1 and 65535.' };

  const literal = hostLiteral(url.hostname);
  if (literal !== undefined) {
    if (!isPublicAddress(literal, allowed)) {
      return { ok: false, reason: notPublic(literal, `The URL's host ${literal} is not a public address.`) };
    }
    return { ok: true, url };
  }

  const host = url.hostname;
  if (!isDnsName(host)) return { ok: false, reason: "The URL's host is not a valid DNS name or IP address." };
  if (isLocalhostName(host)) {
    if (allowedLocalhostAddresses(allowed).length === 0) {
      return { ok: false, reason: withHint("The URL's host is localhost, which is not public.", hint) };
    }
    return { ok: true, url };
  }

  let addresses: string[];
  try {
    addresses = await withTimeout((opts.resolve ?? resolveHost)(host), opts.resolveTimeoutMs ?? 5000);
  } catch (error) {
    if ((error as Error).name === 'TimeoutError') {
      return { ok: false, reason: "Looking up the URL's host name timed out." };
    }
    return { ok: false, reason: "The URL's host name does not resolve." };
  }
  if (addresses.length === 0) return { ok: false, reason: "The URL's host name does not resolve." };
  for (const address of addresses) {
    if (!isPublicAddress(address, allowed)) {
      return {
        ok: false,
        reason: notPublic(address, `The URL's host resolves to ${address}, which is not a public address.`),
      };
    }
  }
  return { ok: true, url };
}

/**
 * The same rule under a name that does not say "webhook", e.g. for
 * notify.slack_webhook_url: its refusals do not point to `pausepoint listen`,
 * which forwards webhook events only.
 */
export const checkOutboundUrl = (raw: string, opts: UrlCheckOptions) =>
  checkWebhookUrl(raw, { loopbackHint: '', ...opts });

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = new Error(`timed out after ${ms} ms`);
      error.name = 'TimeoutError';
      reject(error);
    }, ms);
    timer.unref();
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
