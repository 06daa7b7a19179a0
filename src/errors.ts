import type { FieldProblem } from './domain/problems.js';

// The typed error codes of the API. Every failure a client can see is an
// ApiError rendered as {"error": {code, message, request_id, details?}}.

export const errorStatus = {
  invalid_request: 400,
  invalid_form: 400,
  invalid_values: 400,
  invalid_webhook_url: 400,
  invalid_events: 400,
  invalid_secret: 400,
  invalid_signature: 400,
  channel_unavailable: 400,
  unauthorized: 401,
  quota_exceeded: 402,
  not_found: 404,
  method_not_allowed: 405,
  email_taken: 409,
  idempotency_conflict: 409,
  pause_not_pending: 409,
  already_responded: 409,
  already_voted: 409,
  delivery_not_failed: 409,
  notification_not_failed: 409,
  webhook_disabled: 409,
  pause_closed: 410,
  request_timeout: 408,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  headers_too_large: 431,
  internal_error: 500,
  not_configured: 503,
  search_timeout: 503,
} as const;

export type ErrorCode = keyof typeof errorStatus;

export class ApiError extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
    /** Extra response headers, e.g. Retry-After. */
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'ApiError';
    this.status = errorStatus[code];
  }
}

export const notFound = (what = 'Resource') => new ApiError('not_found', `${what} not found.`);

export type { FieldProblem };

// However many fields are bad, the answer stays small.
const FIELDS_LISTED = 100;
const FIELDS_IN_MESSAGE = 10;

/**
 * The code of a refusal that names one of these fields (or a field below it):
 * a pause's form, and an answer's values to it. Any other is invalid_request.
 */
const FIELD_CODES = new Map<string, ErrorCode>([
  ['form', 'invalid_form'],
  ['values', 'invalid_values'],
]);

const codeOf = (problems: FieldProblem[]): ErrorCode => {
  for (const { field } of problems) {
    const code = FIELD_CODES.get(field.split('.', 1)[0] ?? '');
    if (code) return code;
  }
  return 'invalid_request';
};

/** A refused request, naming each bad field: `details.fields` and the message say the same. */
export function invalidFields(problems: FieldProblem[]): ApiError {
  const named = problems.slice(0, FIELDS_IN_MESSAGE).map((p) => `${p.field} ${p.problem}`);
  const more = problems.length - named.length;
  if (more > 0) named.push(`and ${more} more field${more === 1 ? '' : 's'}`);
  return new ApiError(codeOf(problems), `Invalid request: ${named.join('; ')}.`, {
    fields: problems.slice(0, FIELDS_LISTED),
  });
}

/** A 400 for one field that passed the schema but breaks a rule of its own. */
export const invalidField = (field: string, problem: string) => invalidFields([{ field, problem }]);
