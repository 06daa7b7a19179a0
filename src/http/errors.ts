import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../errors.js';
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
  if (error.validation) {
    const problems = describeValidation(error.validation, error.validationContext);
    const message = problems.map((p) => `${p.field} ${p.problem}`).join('; ');
    return new ApiError('invalid_request', `Invalid request: ${message}.`, { fields: problems });
  }
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

export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const apiError = error instanceof ApiError ? error : fromFastifyError(error);
    if (apiError) return sendError(request, reply, apiError);
    request.log.error({ err: error }, 'request failed');
    return sendError(request, reply, new ApiError('internal_error', 'Something went wrong on our side.'));
  });

  app.setNotFoundHandler((request, reply) =>
    sendError(request, reply, new ApiError('not_found', `No endpoint ${request.method} ${request.url.split('?')[0]}.`)),
  );
}
