import { Ajv, type Options } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyInstance, FastifySchemaValidationError } from 'fastify';

// Request validation. Bodies are strict: no type coercion and no silently
// dropped fields, so `"allow_text": "true"` or an unknown field is a 400.
// Query strings and path parameters arrive as text and are coerced.
function makeAjv(options: Options): Ajv {
  const ajv = new Ajv({ allErrors: false, strict: false, useDefaults: true, ...options });
  ((addFormats as any).default ?? addFormats)(ajv);
  return ajv;
}

export function installValidation(app: FastifyInstance): void {
  const bodyAjv = makeAjv({ coerceTypes: false, removeAdditional: false });
  const textAjv = makeAjv({ coerceTypes: true, removeAdditional: false });
  app.setValidatorCompiler(({ schema, httpPart }) =>
    httpPart === 'body' ? bodyAjv.compile(schema) : textAjv.compile(schema),
  );
}

export interface FieldProblem {
  field: string;
  problem: string;
}

/** Turns ajv's errors into {field, problem} pairs a person can act on. */
export function describeValidation(errors: FastifySchemaValidationError[], part: string | undefined): FieldProblem[] {
  return errors.map((error) => {
    const params = error.params as Record<string, unknown>;
    const path = error.instancePath.replace(/^\//, '').replaceAll('/', '.');
    const child = (params.missingProperty ?? params.additionalProperty) as string | undefined;
    const field = [path, child].filter(Boolean).join('.') || part || 'body';
    let problem = error.message ?? 'is invalid';
    if (params.additionalProperty) problem = 'is not a known field';
    if (params.missingProperty) problem = 'is required';
    return { field, problem };
  });
}
