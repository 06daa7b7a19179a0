import '../domain/ajv-equal.js';
import { Ajv, type Options } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyInstance, FastifySchemaValidationError } from 'fastify';
import { describeValidation } from '../domain/schema-errors.js';
import { type FieldProblem, invalidFields } from '../errors.js';

// Request validation. Bodies are strict: no type coercion and no silently
// dropped fields, so `"allow_text": "true"` or an unknown field is a 400.
// Query strings and path parameters arrive as text and are coerced.
// Every bad field is reported (allErrors); bodies are capped in size and in
// number of values before they get here, so that stays cheap.
function makeAjv(options: Options): Ajv {
  const ajv = new Ajv({ allErrors: true, strict: false, useDefaults: true, ...options });
  ((addFormats as any).default ?? addFormats)(ajv);
  return ajv;
}

const BODY_OPTIONS: Options = { coerceTypes: false, removeAdditional: false };

export function installValidation(app: FastifyInstance): void {
  const bodyAjv = makeAjv(BODY_OPTIONS);
  const textAjv = makeAjv({ coerceTypes: true, removeAdditional: false });
  app.setValidatorCompiler(({ schema, httpPart }) =>
    httpPart === 'body' ? bodyAjv.compile(schema) : textAjv.compile(schema),
  );
}

/**
 * The rules of a body that span fields (e.g. "quorum needs reviewers"), which
 * its handler checks once the schema passes. When the schema fails they are
 * also run, on the body as it came, so one 400 names every problem.
 */
export type CrossFieldRules = (body: Record<string, unknown>) => FieldProblem[];

/** The schema's problems of a body, then those of `rules` on fields the schema did not already name. */
function bodyProblems(errors: FastifySchemaValidationError[], body: unknown, rules?: CrossFieldRules): FieldProblem[] {
  const problems = describeValidation(errors, 'body');
  if (rules === undefined || typeof body !== 'object' || body === null || Array.isArray(body)) return problems;
  const named = new Set(problems.map((p) => p.field));
  return [...problems, ...rules(body as Record<string, unknown>).filter((p) => !named.has(p.field))];
}

/**
 * For a route declared with attachValidation: throws the 400 its validation
 * error stands for, naming beside the schema's errors the body's cross-field
 * problems (`rules`). A failure of another part (headers, query) is thrown as is.
 */
export function throwInvalidBody(
  error: Error & { validation: FastifySchemaValidationError[]; validationContext: string },
  body: unknown,
  rules: CrossFieldRules,
): never {
  if (error.validationContext !== 'body') throw error;
  throw invalidFields(bodyProblems(error.validation, body, rules));
}

/**
 * Checks a value against a route's body schema, exactly as the route checks
 * its body: for a request that arrives another way (an MCP tool's call)
 * but must meet the same rules. Throws the same 400 the route would (with
 * `rules`, as a route with attachValidation and throwInvalidBody does).
 */
export function bodyChecker<T>(schema: object): (value: unknown, rules?: CrossFieldRules) => T {
  const validate = makeAjv(BODY_OPTIONS).compile(schema);
  return (value, rules) => {
    if (validate(value)) return value as T;
    throw invalidFields(bodyProblems((validate.errors ?? []) as FastifySchemaValidationError[], value, rules));
  };
}

export { describeValidation };
