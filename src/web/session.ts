import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ServiceContext } from '../context.js';
import { hmacSha256, safeEqual } from '../domain/crypto.js';
import { ApiError } from '../errors.js';
import { isHttps, pageSecurityHeaders } from '../http/headers.js';

// The signed-in web apps' shared machinery (the console at /console, the
// reviewers' inbox at /inbox): a session cookie, CSRF tokens, the cross-site
// check and the headers of every page. Each app has its own cookie name and
// its own CSRF key, so a session of one is nothing to the other.
//
// The cookie holds only an opaque token (its hash is in the app's sessions
// table): HttpOnly, SameSite=Lax, and on https Secure with the __Host- prefix
// (so no subdomain or plain-http page can set it). Every state-changing form
// carries a CSRF token: the HMAC of the session's id under the app's key.

type BaseUrl = Pick<ServiceContext, 'publicBaseUrl'>;

/** The token the browser sent in the cookie `name`, if any and if it looks like one. */
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

export interface SessionCookie {
  name(services: BaseUrl): string;
  /** The cookie lasts for the browser's session; the database says when it ends. */
  set(reply: FastifyReply, services: BaseUrl, token: string): void;
  clear(reply: FastifyReply, services: BaseUrl): void;
}

/** The session cookie called `base` (with the __Host- prefix on https). */
export function sessionCookie(base: string): SessionCookie {
  const name = (services: BaseUrl) => (isHttps(services) ? `__Host-${base}` : base);
  const attributes = (services: BaseUrl) => `Path=/; HttpOnly; SameSite=Lax${isHttps(services) ? '; Secure' : ''}`;
  return {
    name,
    set: (reply, services, token) => reply.header('set-cookie', `${name(services)}=${token}; ${attributes(services)}`),
    clear: (reply, services) => reply.header('set-cookie', `${name(services)}=; Max-Age=0; ${attributes(services)}`),
  };
}

/** A CSRF token: bound to the app (`purpose`, and its key) and to the session. */
export const csrfTokenFor = (key: Buffer, purpose: string, sessionId: string): string =>
  hmacSha256(key, `${purpose}:${sessionId}`, 'base64url');

/** Whether `given` is this session's CSRF token, compared in constant time. */
export const csrfMatchesFor = (key: Buffer, purpose: string, sessionId: string, given: unknown): boolean =>
  typeof given === 'string' && safeEqual(given, csrfTokenFor(key, purpose, sessionId));

/**
 * Whether a browser says this POST came from another site: by Sec-Fetch-Site,
 * or by an Origin that is neither PUBLIC_BASE_URL's nor the Host it was sent
 * to. (Clients that send neither are not browsers, which CSRF needs.)
 */
export function isCrossSite(request: FastifyRequest, services: BaseUrl): boolean {
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

// The console's script reads a small JSON of its own (the pending count).
const SECURITY_HEADERS = pageSecurityHeaders({ referrer: 'same-origin', fetches: true });

/** Who a request is signed in as: the app's session, and the CSRF token for its forms. */
export interface SignedInBase {
  session: { id: string };
  csrf: string;
}

/** Where an app keeps each request's session while the request runs. */
export interface RequestSessions<S extends SignedInBase> {
  signedInOf(request: FastifyRequest): S | undefined;
  remember(request: FastifyRequest, value: S): void;
}

export function requestSessions<S extends SignedInBase>(): RequestSessions<S> {
  const byRequest = new WeakMap<FastifyRequest, S>();
  return {
    signedInOf: (request) => byRequest.get(request),
    remember: (request, value) => void byRequest.set(request, value),
  };
}

export interface PageGuard<S extends SignedInBase> {
  sessions: RequestSessions<S>;
  /** The session cookie and the CSRF key and purpose of this app. */
  cookie: SessionCookie;
  csrfKey: (services: ServiceContext) => Buffer;
  csrfPurpose: string;
  /** The live session of a cookie's token, without its CSRF token. */
  resume: (services: ServiceContext, token: string) => Promise<Omit<S, 'csrf'> | undefined>;
  /** Paths that need no session lookup (static assets). */
  assetsPrefix: string;
  /** Whether this route needs a session (its GETs go to sign-in, its POSTs are refused without one). */
  needsSession: (request: FastifyRequest) => boolean;
  signInPath: string;
  /** What the app is called in its messages ("console", "inbox"). */
  place: string;
  /** The app's error page, as the document to send. */
  errorPage: (request: FastifyRequest, title: string, message: string) => string;
}

/**
 * Installs an app's page security in its plugin scope: the headers of every
 * page, the session (remembered for the request; read with `signedInOf`), the
 * cross-site refusal of every POST, the session and CSRF token a route that
 * needs them requires, and errors as the app's pages (never JSON).
 */
export function installPageGuard<S extends SignedInBase>(app: FastifyInstance, guard: PageGuard<S>): void {
  const { signedInOf, remember } = guard.sessions;
  /** Looks up the cookie's session once and remembers it for the request. */
  const resumeSession = async (request: FastifyRequest) => {
    const { services } = app;
    const token = tokenFromCookie(request, guard.cookie.name(services));
    if (!token) return;
    const resumed = await guard.resume(services, token);
    if (resumed)
      remember(request, {
        ...resumed,
        csrf: csrfTokenFor(guard.csrfKey(services), guard.csrfPurpose, resumed.session.id),
      } as S);
  };
  const page = async (request: FastifyRequest, reply: FastifyReply, status: number, title: string, message: string) => {
    // An unknown address is refused before preHandler runs: its page still gets the signed-in frame.
    // (If that fails too, e.g. with the database down, the page goes out in the signed-out frame.)
    // Not for a refused request (a 429 of the sign-in limits): that must cost no database read.
    if (status !== 429 && !signedInOf(request)) await resumeSession(request).catch(() => undefined);
    return reply
      .type('text/html; charset=utf-8')
      .code(status)
      .send(guard.errorPage(request, title, message));
  };
  const forbidden = (request: FastifyRequest, reply: FastifyReply) => {
    const message = signedInOf(request)
      ? `This form was not sent from this ${guard.place} page, or it is out of date: go back, reload the page and try again.`
      : 'You are not signed in (your session may have ended): sign in, then try again.';
    return page(request, reply, 403, 'Not allowed', message);
  };

  app.addHook('onSend', async (_request, reply) => {
    reply.headers(SECURITY_HEADERS);
    if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
  });

  app.addHook('preHandler', async (request, reply) => {
    if (request.url.startsWith(guard.assetsPrefix)) return;
    const { services } = app;
    const key = guard.csrfKey(services);
    await resumeSession(request);
    const isPost = request.method === 'POST';
    if (isPost && isCrossSite(request, services)) return forbidden(request, reply);
    if (!guard.needsSession(request)) return;
    const current = signedInOf(request);
    if (!isPost) {
      if (!current) return reply.redirect(guard.signInPath, 303);
      return;
    }
    const given = (request.body as Record<string, unknown> | null | undefined)?.csrf;
    if (!current || !csrfMatchesFor(key, guard.csrfPurpose, current.session.id, given)) {
      return forbidden(request, reply);
    }
  });

  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof ApiError) {
      const title = error.code === 'rate_limited' ? 'Too many attempts' : 'That did not work';
      reply.headers(error.headers ?? {});
      return page(request, reply, error.status, title, error.message);
    }
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500)
      return page(request, reply, status, 'That did not work', 'The request could not be read.');
    request.log.error({ err: error }, `${guard.place} page failed`);
    return page(request, reply, 500, 'Something went wrong', 'Something went wrong on our side; please try again.');
  });

  app.setNotFoundHandler((request, reply) => page(request, reply, 404, 'Not found', 'There is nothing here.'));
}
