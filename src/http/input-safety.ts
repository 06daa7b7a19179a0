import type { FastifyInstance } from 'fastify';
import { ApiError } from '../errors.js';

// Input no handler should ever see, refused with a 400 before validation:
// U+0000 in any text (PostgreSQL cannot store it), lone UTF-16 surrogates
// (from JSON escapes such as "\ud800"; they cannot be stored as text and
// would come back as U+FFFD, no longer the text that was sent) and structures
// nested deeper than any real request (recursive code such as JSON.stringify
// would overflow the stack on them). The walk allocates nothing per value: a
// JSON body reaches it with at most 20,000 values (see json-values.ts).

export const MAX_NESTING = 64;

type WellFormed = string & { isWellFormed(): boolean };

function unsafeText(text: string): ApiError | null {
  if (text.includes('\u0000')) {
    return new ApiError('invalid_request', 'Text may not contain the NUL character (U+0000).');
  }
  if (!(text as WellFormed).isWellFormed()) {
    return new ApiError(
      'invalid_request',
      'Text may not contain a lone UTF-16 surrogate (U+D800 to U+DFFF outside a pair, e.g. "\\ud800").',
    );
  }
  return null;
}

const tooDeep = () => new ApiError('invalid_request', `The request is nested more than ${MAX_NESTING} levels deep.`);

function unsafeValue(value: unknown, depth: number): ApiError | null {
  if (typeof value === 'string') return unsafeText(value);
  if (value === null || typeof value !== 'object' || Buffer.isBuffer(value)) return null;
  // Recursion is bounded: nothing deeper than MAX_NESTING is entered.
  if (depth >= MAX_NESTING) return tooDeep();
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const problem = unsafeValue(value[i], depth + 1);
      if (problem) return problem;
    }
    return null;
  }
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    const problem = unsafeText(key) ?? unsafeValue((value as Record<string, unknown>)[key], depth + 1);
    if (problem) return problem;
  }
  return null;
}

export function unsafeInput(value: unknown): ApiError | null {
  return unsafeValue(value, 0);
}

/** Checks path parameters, the query string and a parsed body of every request. */
export function installInputSafety(app: FastifyInstance): void {
  // A callback, not an async hook: it runs on every request.
  app.addHook('preValidation', (request, _reply, done) => {
    done(unsafeValue(request.params, 1) ?? unsafeValue(request.query, 1) ?? unsafeValue(request.body, 1) ?? undefined);
  });
}
