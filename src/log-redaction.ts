import type { FastifyRequest } from 'fastify';

// What a request looks like in the log. Headers are never logged (they carry
// keys and signatures), and the response token of /v1/respond/{token} and
// /r/{token} never is, since it lets anyone answer the pause.
//
// The path is judged by the route it reached, not by its spelling: the router
// decodes percent-encoding, so /%72/{token} and /v%31/respond/{token} reach
// the same routes as /r/{token} and /v1/respond/{token}.

const REDACTED = '[redacted]';

/** Route parameters that are secrets. */
const SECRET_PARAM = /:token(?=\/|$)/;

/**
 * A path segment no route matched is logged only when it is shorter than
 * this: a response token is about 76 characters (its signature alone 43),
 * while the words of the API's paths are short.
 */
const LOGGED_SEGMENT_LENGTH = 16;

/** The URL as logged: the route with its secret parameters cut out, or what an unmatched path may show. */
export function loggedUrl(request: FastifyRequest): string {
  const route = routeOf(request);
  if (route === undefined) return unmatchedPath(request.url);
  if (!SECRET_PARAM.test(route)) return request.url;
  const query = request.url.indexOf('?');
  return route.replace(SECRET_PARAM, REDACTED) + (query < 0 ? '' : request.url.slice(query));
}

/** The pattern of the route the request reached, e.g. /r/:token; undefined when none did. */
function routeOf(request: FastifyRequest): string | undefined {
  try {
    return request.routeOptions.url;
  } catch {
    return undefined;
  }
}

/**
 * A path no route matched (a 404, or one whose encoding does not decode):
 * anything in it may be a mistyped or mangled token, so long segments and the
 * query string are left out.
 */
function unmatchedPath(url: string): string {
  const query = url.indexOf('?');
  const path = query < 0 ? url : url.slice(0, query);
  const segments = path
    .split('/')
    .map((segment) => (segment.length < LOGGED_SEGMENT_LENGTH ? segment : REDACTED))
    .join('/');
  return query < 0 ? segments : `${segments}?${REDACTED}`;
}

export const requestSerializer = (request: FastifyRequest) => ({
  method: request.method,
  url: loggedUrl(request),
  remoteAddress: request.ip,
});

/** Pino redaction for objects that are logged by hand; a second line of defence. */
export const redactPaths = [
  'req.headers.authorization',
  'headers.authorization',
  'req.headers.cookie',
  'headers.cookie',
  '*.password',
  '*.secret',
  '*.key',
  '*.token',
];
