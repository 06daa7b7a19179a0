import type { Outcome, Pause } from './types.js';

/** A refused field: its path with dots (`form.schema.properties.amount.pattern`) and what is wrong with it. */
export interface FieldProblem {
  field: string;
  problem: string;
}

export interface PausepointErrorFields {
  /** The HTTP status; undefined when no answer came (network error, timeout). */
  status?: number | undefined;
  code: string;
  requestId?: string | undefined;
  details?: Record<string, unknown> | undefined;
  cause?: unknown;
}

/**
 * Every error the SDK throws (except an aborted signal's own reason). API
 * errors carry the service's `code` (`not_found`, `pause_not_pending`,
 * `rate_limited`, …), the HTTP `status` and the `requestId` to quote in a
 * support request.
 */
export class PausepointError extends Error {
  override name = 'PausepointError';
  readonly status: number | undefined;
  readonly code: string;
  readonly requestId: string | undefined;
  readonly details: Record<string, unknown> | undefined;

  constructor(message: string, fields: PausepointErrorFields) {
    super(message, fields.cause === undefined ? undefined : { cause: fields.cause });
    this.status = fields.status;
    this.code = fields.code;
    this.requestId = fields.requestId;
    this.details = fields.details;
  }

  /** Each refused field of a 400 (`invalid_request`, `invalid_form`, …), from `details.fields`; empty otherwise. */
  get fields(): FieldProblem[] {
    const listed = this.details?.fields;
    if (!Array.isArray(listed)) return [];
    return listed.filter(
      (item): item is FieldProblem =>
        typeof item === 'object' && item !== null && typeof item.field === 'string' && typeof item.problem === 'string',
    );
  }
}

/** No answer from the service: the connection failed or the request took too long (`code` `connection_error` or `timeout`). */
export class PausepointConnectionError extends PausepointError {
  override name = 'PausepointConnectionError';
}

/** `waitFor()` (or `ask()`) gave up after its `timeoutMs` while the pause was still pending. */
export class WaitTimeoutError extends PausepointError {
  override name = 'WaitTimeoutError';
  /** The pause as last seen, still pending. */
  readonly pause: Pause | undefined;

  constructor(message: string, pause: Pause | undefined) {
    super(message, { code: 'wait_timeout' });
    this.pause = pause;
  }
}

/** A webhook whose signature does not match (`invalid_signature`) or whose body is not a pausepoint event (`invalid_payload`). */
export class WebhookVerificationError extends PausepointError {
  override name = 'WebhookVerificationError';
}

/**
 * The values of an answer do not pass the form's Standard Schema (code
 * `invalid_form_values`): the schema is stricter than the JSON Schema the
 * service checked, or the form changed. `outcome` is the answer as it came.
 */
export class FormValuesError extends PausepointError {
  override name = 'FormValuesError';
  /** The outcome as the service gave it, its values unparsed; set by `ask()`. */
  outcome: Outcome | undefined;

  constructor(message: string, fields: FieldProblem[], outcome?: Outcome) {
    super(message, { code: 'invalid_form_values', details: { fields } });
    this.outcome = outcome;
  }
}
