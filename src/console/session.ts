import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ServiceContext } from '../context.js';
import { hmacSha256, safeEqual } from '../domain/crypto.js';
import type { Developer } from '../store/accounts.js';
import type { ConsoleSession } from '../store/console-sessions.js';

// The console's cookie and CSRF tokens. The cookie holds only an opaque token
// (its hash is in console_sessions): HttpOnly, SameSite=Lax, and on https
// Secure with the __Host- prefix (so no subdomain or plain-http page can set
// it). Every state-changing form carries a CSRF token: the HMAC of the
// session's id under a key derived from SECRET_KEY.

export interface SignedIn {
  session: ConsoleSession;
  developer: Developer;
  /** The CSRF token for this session's forms. */
  csrf: string;
}

const signedIn = new WeakMap<FastifyRequest, SignedIn>();
const sessions = new WeakMap<FastifyRequest, ConsoleSession>();

export const signedInOf = (request: FastifyRequest): SignedIn | undefined => signedIn.get(request);
export const sessionOf = (request: FastifyRequest): ConsoleSession | undefined => sessions.get(request);
export function rememberSignedIn(request: FastifyRequest, value: SignedIn): void {
  signedIn.set(request, value);
  sessions.set(request, value.session);
}

const isHttps = (services: Pick<ServiceContext, 'publicBaseUrl'>) => services.publicBaseUrl.startsWith('https:');

export const cookieName = (services: Pick<ServiceContext, 'publicBaseUrl'>) =>
  isHttps(services) ? '__Host-pausepoint_console' : 'pausepoint_console';

/** The session token the browser sent, if any. */
export function tokenFromCookie(request: FastifyRequest, name: string): string | undefined {
  const header = request.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === name) {
      const value = part.slice(at + 1).trim();
      return /^[A-Za-z0-9_]{1,128}$/.test(value) ? value : undefined;
    }
  }
  return undefined;
}

function cookieAttributes(services: Pick<ServiceContext, 'publicBaseUrl'>): string {
  return `Path=/; HttpOnly; SameSite=Lax${isHttps(services) ? '; Secure' : ''}`;
}

/** The cookie lasts for the browser's session; the database says when it ends. */
export function setSessionCookie(reply: FastifyReply, services: Pick<ServiceContext, 'publicBaseUrl'>, token: string) {
  reply.header('set-cookie', `${cookieName(services)}=${token}; ${cookieAttributes(services)}`);
}

export function clearSessionCookie(reply: FastifyReply, services: Pick<ServiceContext, 'publicBaseUrl'>) {
  reply.header('set-cookie', `${cookieName(services)}=; Max-Age=0; ${cookieAttributes(services)}`);
}

export const csrfToken = (key: Buffer, sessionId: string): string =>
  hmacSha256(key, `console-csrf:${sessionId}`).toString('base64url');

/** Whether `given` is this session's CSRF token, compared in constant time. */
export const csrfMatches = (key: Buffer, sessionId: string, given: unknown): boolean =>
  typeof given === 'string' && safeEqual(given, csrfToken(key, sessionId));

/**
 * Whether a browser says this POST came from another site: by Sec-Fetch-Site,
 * or by an Origin that is neither PUBLIC_BASE_URL's nor the Host it was sent
 * to. (Clients that send neither are not browsers, which CSRF needs.)
 */
export function isCrossSite(request: FastifyRequest, services: Pick<ServiceContext, 'publicBaseUrl'>): boolean {
  const site = request.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') return true;
  const origin = request.headers.origin;
  if (origin === undefined) return false;
  if (origin === new URL(services.publicBaseUrl).origin) return false;
  try {
    return new URL(origin).host !== request.headers.host;
  } catch {
    return true;
  }
}
