import type { FastifyInstance } from 'fastify';
import { ApiError } from '../errors.js';

// Input no handler should ever see, refused with a 400 before validation:
// U+0000 in any text (PostgreSQL cannot store it) and structures nested
// deeper than any real request (recursive code such as JSON.stringify would
// overflow the stack on them).

export const MAX_NESTING = 64;

export function unsafeInput(value: unknown): ApiError | null {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!;
    if (typeof current === 'string') {
      if (current.includes('\u0000')) {
        return new ApiError('invalid_request', 'Text may not contain the NUL character (U+0000).');
      }
    } else if (current !== null && typeof current === 'object' && !Buffer.isBuffer(current)) {
      if (depth >= MAX_NESTING) {
        return new ApiError('invalid_request', `The request is nested more than ${MAX_NESTING} levels deep.`);
      }
      for (const [key, child] of Object.entries(current)) stack.push([key, depth + 1], [child, depth + 1]);
    }
  }
  return null;
}

/** Checks path parameters, the query string and a parsed body of every request. */
export function installInputSafety(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    const problem = unsafeInput([request.params, request.query, request.body]);
    if (problem) throw problem;
  });
}
