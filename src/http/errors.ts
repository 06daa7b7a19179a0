import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, invalidFields } from '../errors.js';
import { describeValidation } from './validation.js';

// Every failure leaves as {"error": {code, message, request_id, details?}};
// Fastify's own errors are mapped onto the same codes. A 500 says nothing of
// its cause to the client; the cause goes to the log.

export function sendError(request: FastifyRequest, reply: FastifyReply, error: ApiError) {
  if (error.headers) reply.headers(error.headers);
  return reply.code(error.status).send({
    error: {
      code: error.code,
      message: error.message,
      request_id: request.id,
      ...(error.details ? { details: error.details } : {}),
    },
  });
}

function fromFastifyError(error: FastifyError): ApiError | null {
  if (error.validation) return invalidFields(describeValidation(error.validation, error.validationContext));
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError('payload_too_large', 'The request body is larger than the 1 MiB limit.');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError('unsupported_media_type', 'Send the body as Content-Type: application/json.');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ApiError('invalid_request', 'The body is not valid JSON.');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ApiError('invalid_request', 'The Content-Length header does not match the body.');
    case 'FST_ERR_BAD_URL':
      return new ApiError('invalid_request', 'The URL path is not valid percent-encoding.');
    // routerOptions.maxParamLength: no identifier or token is that long.
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new ApiError('not_found', 'No such resource: a path segment is longer than 512 characters.');
  }
  if (error instanceof SyntaxError && error.statusCode === 400) {
    return new ApiError('invalid_request', 'The body is not valid JSON.');
  }
  if (error.statusCode === 404) return new ApiError('not_found', 'No such endpoint.');
  if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
    return new ApiError('invalid_request', 'The request could not be read.');
  }
  return null;
}

function handleError(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  const apiError = error instanceof ApiError ? error : fromFastifyError(error);
  if (apiError) return sendError(request, reply, apiError);
  request.log.error({ err: error }, 'request failed');
  return sendError(request, reply, new ApiError('internal_error', 'Something went wrong on our side.'));
}

export const noSuchEndpoint = (request: FastifyRequest) =>
  new ApiError('not_found', `No endpoint ${request.method} ${request.url.split('?')[0]}.`);

export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler(handleError);
  app.setNotFoundHandler((request, reply) => sendError(request, reply, noSuchEndpoint(request)));
}

/**
 * Fastify's `frameworkErrors` option: what it refuses before routing (a path
 * whose percent-encoding does not decode, a path parameter over
 * maxParamLength) gets the same error body. No hook runs for these replies,
 * so the headers the app's onSend hook adds are set here.
 */
export function frameworkErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  reply.header('x-request-id', request.id);
  reply.header('x-content-type-options', 'nosniff');
  reply.header('cache-control', 'no-store');
  return handleError(error, request, reply);
}

/** What Node's HTTP parser refuses, as the ApiError to answer with. */
function fromClientError(code: string): ApiError {
  switch (code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new ApiError(
        'request_timeout',
        'The request did not arrive in time (HEADERS_TIMEOUT_MS, REQUEST_TIMEOUT_MS).',
      );
    case 'HPE_HEADER_OVERFLOW':
      return new ApiError('headers_too_large', 'The request headers are larger than 16 KiB.');
    default:
      return new ApiError('invalid_request', 'The request is not valid HTTP/1.1.');
  }
}

/**
 * Fastify's `clientErrorHandler`: what fails before there is a request at all
 * (malformed HTTP, headers over 16 KiB, a client too slow to send its request)
 * gets the same error body and headers, then the connection is closed.
 */
export function clientErrorHandler(newRequestId: () => string) {
  return (error: Error & { code?: string }, socket: Socket): void => {
    // A reset connection has nobody left to answer.
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const apiError = fromClientError(error.code ?? '');
    const requestId = newRequestId();
    const body = JSON.stringify({ error: { code: apiError.code, message: apiError.message, request_id: requestId } });
    if (socket.writable) {
      socket.write(
        `HTTP/1.1 ${apiError.status} ${STATUS_CODES[apiError.status]}\r\n` +
          'content-type: application/json; charset=utf-8\r\n' +
          `content-length: ${Buffer.byteLength(body)}\r\n` +
          `x-request-id: ${requestId}\r\n` +
          'x-content-type-options: nosniff\r\ncache-control: no-store\r\nconnection: close\r\n\r\n' +
          body,
      );
    }
    socket.destroy();
  };
}
