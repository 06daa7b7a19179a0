import type { FastifyRequest } from 'fastify';

// What a request looks like in the log. Headers are never logged (they carry
// keys and signatures), and the response token in /v1/respond/{token} and
// /r/{token} is cut out of the URL, since it lets anyone answer the pause.
export function redactUrl(url: string): string {
  return url.replace(/\/(v1\/respond|r)\/[^/?#]+/, '/$1/[redacted]');
}

export const requestSerializer = (request: FastifyRequest) => ({
  method: request.method,
  url: redactUrl(request.url),
  remoteAddress: request.ip,
});

/** Pino redaction for objects that are logged by hand; a second line of defence. */
export const redactPaths = [
  'req.headers.authorization',
  'headers.authorization',
  '*.password',
  '*.secret',
  '*.key',
  '*.token',
];
