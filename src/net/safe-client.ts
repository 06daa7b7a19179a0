// The one SSRF-safe HTTP client for everything pausepoint sends out (webhook
// deliveries, Slack notifications).
//
// - Its own undici Agent (keep-alive, one pool per origin), never the global
//   dispatcher, so HTTP_PROXY / HTTPS_PROXY and friends cannot route around it.
// - The address is checked when the socket is opened, not only at
//   registration, so DNS rebinding cannot reach a private address: names are
//   resolved by our own lookup hook, which refuses the name when ANY of its
//   addresses is not public; IP-literal hosts, for which Node never calls a
//   lookup hook, are checked by the connector itself before connecting.
//   TLS still verifies the certificate against the host name (SNI unchanged).
// - Redirects are never followed (undici 7 follows none without the redirect
//   interceptor): a 3xx is simply a non-2xx result.
// - One deadline (default 5 s) covers look-up, connect, TLS, headers and body;
//   at most maxResponseBytes (default 4 KiB) of the body is read, the rest is
//   dropped with the connection.
// - TLS trusts Node's default store plus NODE_EXTRA_CA_CERTS (read by Node at
//   process start; that is how production and child-process tests add a CA).
//   The `ca` option adds a CA in-process, for tests that cannot restart Node.
import { EventEmitter } from 'node:events';
import { isIP, type LookupFunction } from 'node:net';
import type { Readable } from 'node:stream';
import tls from 'node:tls';
import { Agent, buildConnector, type Dispatcher, request, fetch as undiciFetch } from 'undici';
import type { Cidr } from '../config.js';
import { isLocalhostName } from '../domain/hosts.js';
import {
  allowedLocalhostAddresses,
  isPublicAddress,
  LOOPBACK_ADDRESSES,
  type Resolver,
  resolveHost,
} from './address-policy.js';

export const DEFAULT_TIMEOUT_MS = 5000;
export const DEFAULT_MAX_RESPONSE_BYTES = 4096;

export interface SafeClientOptions {
  allowedNetworks: Cidr[];
  userAgent: string;
  /** Deadline for the whole attempt: look-up, connect, TLS, headers and body. Default 5000. */
  timeoutMs?: number;
  /** At most this many bytes of a response body are read. Default 4096. */
  maxResponseBytes?: number;
  /**
   * Extra trusted CA certificate(s), PEM, added to Node's default roots. Meant
   * for tests; in production set NODE_EXTRA_CA_CERTS before Node starts.
   */
  ca?: string | Buffer;
  /** Name resolver used at connect time (tests inject one). Default: the system resolver, all addresses. */
  resolve?: Resolver;
}

export type PostResult =
  | { ok: true; status: number; body: string }
  | { ok: false; status?: number; error: string; body?: string };

export interface SafeClient {
  post(url: string, body: string | Buffer, headers: Record<string, string>): Promise<PostResult>;
  /**
   * A WHATWG fetch through the same guarded connections, for clients that
   * take one (the Slack Web API's); redirects are refused. The caller picks
   * the URL (a configured one, never a user's).
   */
  fetch(url: string | URL, init?: SafeFetchInit): Promise<Response>;
  /** The guarded connections for a long-lived WebSocket (Slack's Socket Mode): no deadline on the body. */
  socketDispatcher: Dispatcher;
  close(): Promise<void>;
}

export interface SafeFetchInit {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
}

/** Raised when a destination is refused; its message is safe to store and show. */
export class BlockedAddressError extends Error {
  readonly code = 'ERR_ADDRESS_NOT_PUBLIC';
  constructor(message: string) {
    super(message);
    this.name = 'BlockedAddressError';
  }
}

export function createSafeClient(opts: SafeClientOptions): SafeClient {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxResponseBytes = opts.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const allowed = opts.allowedNetworks;
  const resolve = opts.resolve ?? resolveHost;

  const guardedLookup = createGuardedLookup(allowed, resolve);
  const baseConnect = buildConnector({
    timeout: timeoutMs,
    lookup: guardedLookup,
    ...(opts.ca === undefined ? {} : { ca: [...defaultCaCertificates(), opts.ca.toString()] }),
  });

  // Node calls no lookup hook for an IP-literal host, so literals are judged here.
  const connect: buildConnector.connector = (options, callback) => {
    const literal = isIP(options.hostname) === 0 ? undefined : options.hostname;
    if (literal !== undefined && !isPublicAddress(literal, allowed)) {
      callback(new BlockedAddressError(`address ${literal} is not public`), null);
      return;
    }
    baseConnect(options, callback);
  };
  const socketDispatcher = new Agent({ connect, headersTimeout: timeoutMs, bodyTimeout: 0 });
  const agent = new Agent({
    connect,
    keepAliveTimeout: 30_000,
    keepAliveMaxTimeout: 60_000,
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  });

  async function post(rawUrl: string, body: string | Buffer, headers: Record<string, string>): Promise<PostResult> {
    let url: URL;
    try {
      url = new URL(rawUrl);
    } catch {
      return { ok: false, error: 'invalid URL' };
    }
    if (url.protocol !== 'https:') return { ok: false, error: 'only https:// URLs are allowed' };
    if (url.username !== '' || url.password !== '') return { ok: false, error: 'URL must not contain user info' };
    if (url.port === '0') return { ok: false, error: 'invalid port 0' };

    // The deadline is an EventEmitter, which undici takes as a signal as it
    // takes an AbortSignal ('abort' cuts the request and its body), and a
    // timer cleared at the end: an AbortController with undici's listener on
    // it cost 4 µs a post, ten times as much; AbortSignal.timeout costs more
    // still and leaves its timer behind for the full 5 s.
    const deadline = new EventEmitter();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      deadline.emit('abort');
    }, timeoutMs);
    let status: number | undefined;
    try {
      const response = await request(url, {
        dispatcher: agent,
        method: 'POST',
        headers: withUserAgent(headers, opts.userAgent),
        body,
        signal: deadline,
      });
      status = response.statusCode;
      const text = await readCapped(response.body, maxResponseBytes);
      // undici hands a kept-alive socket back to its pool one event-loop turn
      // after the response (setImmediate); wait for it, so that the next post
      // to this origin reuses the connection instead of opening another.
      await new Promise((done) => setImmediate(done));
      return status >= 200 && status < 300
        ? { ok: true, status, body: text }
        : { ok: false, status, error: `HTTP ${status}`, body: text };
    } catch (error) {
      const message = timedOut ? `timed out after ${timeoutMs} ms` : describeError(error);
      return status === undefined ? { ok: false, error: message } : { ok: false, status, error: message };
    } finally {
      clearTimeout(timer);
    }
  }

  const fetch = async (url: string | URL, init: SafeFetchInit = {}): Promise<Response> =>
    (await undiciFetch(url, {
      ...init,
      headers: withUserAgent(init.headers ?? {}, opts.userAgent),
      redirect: 'error',
      dispatcher: agent,
    })) as unknown as Response;

  return {
    post,
    fetch,
    socketDispatcher,
    close: async () => {
      await Promise.all([agent.close(), socketDispatcher.close()]);
    },
  };
}

/**
 * A net.connect lookup hook: resolves the name to all its addresses, refuses
 * the name if any of them is not public, and hands Node only vetted addresses.
 * `localhost` and `*.localhost` are loopback without a look-up, reached only
 * at those of their addresses that are allowed.
 */
function createGuardedLookup(allowed: Cidr[], resolve: Resolver): LookupFunction {
  return (hostname, options, callback) => {
    const vet = async (): Promise<string[]> => {
      if (isLocalhostName(hostname)) {
        const addresses = allowedLocalhostAddresses(allowed);
        if (addresses.length === 0) throw new BlockedAddressError(`address ${LOOPBACK_ADDRESSES[0]} is not public`);
        return addresses;
      }
      const addresses = await resolve(hostname);
      if (addresses.length === 0) throw Object.assign(new Error('host name does not resolve'), { code: 'ENOTFOUND' });
      const blocked = addresses.find((address) => !isPublicAddress(address, allowed));
      if (blocked !== undefined) throw new BlockedAddressError(`address ${blocked} is not public`);
      return addresses;
    };
    vet().then(
      (addresses) => {
        const wanted = options.family === 4 || options.family === 6 ? options.family : 0;
        const usable = addresses
          .map((address) => ({ address, family: isIP(address) }))
          .filter((entry) => wanted === 0 || entry.family === wanted);
        if (usable.length === 0) {
          callback(Object.assign(new Error('host name has no usable address'), { code: 'ENOTFOUND' }), '', 0);
        } else if (options.all) {
          (callback as unknown as (err: null, addresses: { address: string; family: number }[]) => void)(null, usable);
        } else {
          callback(null, usable[0]!.address, usable[0]!.family);
        }
      },
      (error: Error) => callback(error as NodeJS.ErrnoException, '', 0),
    );
  };
}

/** The headers with ours as the only user-agent, in one new object. */
function withUserAgent(headers: Record<string, string>, userAgent: string): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const name in headers) if (name.toLowerCase() !== 'user-agent') kept[name] = headers[name] as string;
  kept['user-agent'] = userAgent;
  return kept;
}

function defaultCaCertificates(): string[] {
  // Node >= 22.15 can list the default store including NODE_EXTRA_CA_CERTS; Node 20 cannot.
  const getCa = (tls as unknown as { getCACertificates?: (type: string) => string[] }).getCACertificates;
  return typeof getCa === 'function' ? getCa('default') : [...tls.rootCertificates];
}

/**
 * The body as text, at most `max` bytes of it; past that the stream is
 * destroyed and the rest never read. Read by listeners rather than an async
 * iterator, which makes a promise a chunk on every delivery's hot path.
 */
function readCapped(body: Readable, max: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const text = () => resolve(Buffer.concat(chunks, size).toString('utf8'));
    body.on('data', (chunk: Buffer) => {
      if (size === max) return;
      const room = max - size;
      if (chunk.length >= room) {
        if (room > 0) chunks.push(chunk.subarray(0, room));
        size = max;
        text();
        body.destroy(); // its error (the body cut short) comes after the answer, and is ignored
        return;
      }
      chunks.push(chunk);
      size += chunk.length;
    });
    body.on('end', text);
    body.on('error', reject);
  });
}

const TLS_CODES: Record<string, string> = {
  DEPTH_ZERO_SELF_SIGNED_CERT: 'self-signed certificate',
  SELF_SIGNED_CERT_IN_CHAIN: 'self-signed certificate in chain',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'unable to verify the certificate',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'unknown certificate issuer',
  CERT_HAS_EXPIRED: 'certificate has expired',
  CERT_NOT_YET_VALID: 'certificate is not yet valid',
  ERR_TLS_CERT_ALTNAME_INVALID: 'certificate does not match the host name',
};

const NET_CODES: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ENOTFOUND: 'host name does not resolve',
  EAI_AGAIN: 'host name look-up failed',
  ETIMEDOUT: 'connection timed out',
  UND_ERR_CONNECT_TIMEOUT: 'connect timed out',
  UND_ERR_HEADERS_TIMEOUT: 'timed out waiting for response headers',
  UND_ERR_BODY_TIMEOUT: 'timed out reading the response body',
  UND_ERR_SOCKET: 'connection closed by the server',
};

/** A short, secret-free description of a failed attempt. */
export function describeError(error: unknown): string {
  if (error instanceof BlockedAddressError) return error.message;
  const err = error as { code?: string; message?: string; cause?: unknown; errors?: unknown[] } | undefined;
  if (err === undefined || err === null) return 'request failed';
  // Happy-eyeballs connects report an AggregateError; its first error tells the story.
  if (Array.isArray(err.errors) && err.errors.length > 0 && err.code === undefined) return describeError(err.errors[0]);
  const code = err.code ?? '';
  if (code in TLS_CODES) return `TLS: ${TLS_CODES[code]}`;
  if (code.startsWith('ERR_SSL') || code.startsWith('ERR_TLS') || /CERT/.test(code)) {
    return `TLS: ${(err.message ?? code).slice(0, 160)}`;
  }
  if (code in NET_CODES) return NET_CODES[code]!;
  if (err.cause !== undefined && err.cause !== error) return describeError(err.cause);
  return (err.message ?? code ?? 'request failed').slice(0, 200) || 'request failed';
}
