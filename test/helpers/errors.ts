import { expect } from 'vitest';
import type { Reply } from './http.js';

// The one body every API error has, {"error": {code, message, request_id,
// details?}} (docs/errors.md), and what no body may show a client.

export const REQUEST_ID = /^req_[0-9a-f]{24}$/;

/** Checks an API error reply: status, code, the documented body, its request id, and nothing internal. */
export function expectError(reply: Reply, status: number, code: string) {
  expect(reply.status, reply.text).toBe(status);
  expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
  expect(Object.keys(reply.body)).toEqual(['error']);
  expect(reply.body.error).toMatchObject({ code, message: expect.any(String), request_id: expect.any(String) });
  expect(reply.body.error.message.length).toBeGreaterThan(0);
  expect(reply.body.error.request_id).toMatch(REQUEST_ID);
  expect(reply.body.error.request_id).toBe(reply.headers.get('x-request-id'));
  expectOnlyDocumentedErrorFields(reply);
}

/** An error body holds code, message and request_id (and details, when there are some), and nothing internal. */
export function expectOnlyDocumentedErrorFields(reply: Reply) {
  expectNoInternals(reply);
  expect(Object.keys(reply.body.error).sort()).toEqual(
    reply.body.error.details ? ['code', 'details', 'message', 'request_id'] : ['code', 'message', 'request_id'],
  );
}

/** Things a body must never show a client: stack frames, source paths, driver messages. */
export function expectNoInternals(reply: Reply) {
  expect(reply.text).not.toMatch(/\bstack\b/i);
  expect(reply.text).not.toMatch(/\n\s+at |\bat .+:\d+:\d+/);
  expect(reply.text).not.toMatch(/node_modules|file:\/\/|\.ts:\d+|\.js:\d+/);
  expect(reply.text).not.toMatch(/kysely|sqlite|postgres|driver|SQL/i);
}
