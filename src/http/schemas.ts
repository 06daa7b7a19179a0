import Type from 'typebox';

// Schemas shared by several routes. They validate requests, shape responses
// and become the OpenAPI document.

export { Timestamp } from '../actions/schema-types.js';

export const ErrorBody = Type.Object(
  {
    error: Type.Object({
      code: Type.String(),
      message: Type.String(),
      request_id: Type.String(),
      details: Type.Optional(Type.Object({}, { additionalProperties: true })),
    }),
  },
  { description: 'Every error has this shape.' },
);

export const ModeSchema = Type.Union([Type.Literal('live'), Type.Literal('test')]);

/** Response schemas for the error statuses a route can return, for the OpenAPI document. */
export function errorResponses(...statuses: number[]) {
  return Object.fromEntries(statuses.map((status) => [status, ErrorBody]));
}
