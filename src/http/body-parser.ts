import type { FastifyInstance, FastifyRequest } from 'fastify';
import { parseJsonSafely } from '../domain/safe-json.js';
import { ApiError } from '../errors.js';
import { noSuchEndpoint } from './errors.js';
import { countJsonValues, MAX_JSON_VALUES } from './json-values.js';

// How request bodies are read. What a body may cost is bounded before it is
// parsed: an unmatched route never reads its body, a route without a body
// schema refuses one unparsed (an ignored body would hide a client's mistake,
// as an ignored unknown field would), and a JSON body of more than
// MAX_JSON_VALUES values is refused after one cheap pass over its bytes.

const invalidJson = () =>
  Object.assign(new Error('invalid JSON'), { statusCode: 400, code: 'FST_ERR_CTP_INVALID_JSON_BODY' });

const noBodyExpected = (request: FastifyRequest) =>
  new ApiError(
    'invalid_request',
    `${request.method} ${request.routeOptions.url} takes no request body; send none (query parameters, if any, go in the URL).`,
  );

const tooManyValues = () => new ApiError('invalid_request', `The JSON body holds more than ${MAX_JSON_VALUES} values.`);

/**
 * JSON bodies, parsed safely (no __proto__ poisoning); an empty body is no
 * body. Fastify's text/plain parser is removed: a JSON body sent as text is a
 * 415 like any other non-JSON type, not a confusing "body must be object".
 */
export function installBodyParsers(app: FastifyInstance): void {
  // Answered before the body is read, so it is never parsed. A callback, not
  // an async hook: it runs on every request, creates included.
  app.addHook('onRequest', (request, _reply, done) => done(request.is404 ? noSuchEndpoint(request) : undefined));
  app.removeContentTypeParser('text/plain');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const bytes = body as Buffer;
    if (bytes.length === 0) return done(null, undefined);
    if (!request.routeOptions.schema?.body) return done(noBodyExpected(request), undefined);
    if (countJsonValues(bytes) > MAX_JSON_VALUES) return done(tooManyValues(), undefined);
    try {
      done(null, parseJsonSafely(bytes));
    } catch {
      done(invalidJson(), undefined);
    }
  });
}
