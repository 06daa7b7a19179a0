// A pause's form as the SDK takes it: a JSON Schema object (its values typed
// by a generic), or a Standard Schema that can give JSON Schema (zod 4…),
// sent as its JSON Schema and used again to parse the answer. The service
// checks the form itself (400 invalid_form naming each field); the SDK only
// converts and parses.
import { FormValuesError, PausepointError } from './errors.js';
import {
  isStandardSchema,
  type StandardInput,
  type StandardOutput,
  type StandardSchemaWithJson,
} from './standard-schema.js';
import type { CreatePauseParams } from './types.js';

/** A JSON Schema object (draft 2020-12, `type: "object"`), as the API takes a form's `schema`. */
export type JsonSchema = Record<string, unknown>;

/** A form described by a JSON Schema object; `Values` types the proposed and answered values. */
export interface JsonSchemaForm<Values = Record<string, unknown>> {
  schema: JsonSchema;
  /** The proposed answer, shown prefilled; omitted, the human fills the form in from empty. */
  values?: Values | undefined;
  /** The options that submit the form (default: every option); the others submit no values. */
  on?: string[] | undefined;
}

/** A form described by a Standard Schema with JSON Schema (e.g. a zod 4 object): the answer is parsed by it. */
export interface StandardSchemaForm<Schema extends StandardSchemaWithJson> {
  schema: Schema;
  /** The proposed answer (the schema's input type), shown prefilled. */
  values?: StandardInput<Schema> | undefined;
  /** The options that submit the form (default: every option); the others submit no values. */
  on?: string[] | undefined;
}

/** `pauses.create` / `ask` parameters with a form of the given kind. */
export type PauseParamsWithForm<Form> = Omit<CreatePauseParams, 'form'> & { form: Form };

/** The formats the service checks itself; a `pattern` beside one of them is the schema library's copy of it. */
const CHECKED_FORMATS = new Set(['email', 'uri', 'date', 'date-time']);
/** Keywords whose values are data, not schemas: left as they are. */
const DATA_KEYWORDS = new Set(['const', 'enum', 'default', 'examples']);

/** The request body for params whose form may carry a Standard Schema: the same params with its JSON Schema. */
export function withJsonSchemaForm(params: CreatePauseParams | PauseParamsWithForm<unknown>): CreatePauseParams {
  const form = params.form as { schema?: unknown } | undefined;
  if (form === undefined || !isStandardSchema(form.schema)) return params as CreatePauseParams;
  return { ...params, form: { ...form, schema: jsonSchemaOf(form.schema) } } as CreatePauseParams;
}

/**
 * A Standard Schema's JSON Schema of its input (what the human submits), for
 * draft 2020-12. A `pattern` beside a format the service checks (zod adds one
 * to `z.email()` and `z.iso.date()`) is left out: the service checks the
 * format itself, runs patterns on RE2 (which refuses lookarounds such
 * copies may use), and the answer is parsed by the schema itself.
 */
export function jsonSchemaOf(schema: { readonly '~standard': Record<string, unknown> }): JsonSchema {
  const converter = schema['~standard'].jsonSchema as Partial<StandardSchemaWithJson['~standard']['jsonSchema']>;
  if (typeof converter?.input !== 'function') {
    throw formError(
      'cannot give JSON Schema: pass a JSON Schema object, or a schema of a library that implements Standard JSON Schema (~standard.jsonSchema), such as zod 4.2 or later',
    );
  }
  let converted: unknown;
  try {
    converted = converter.input({ target: 'draft-2020-12' });
  } catch (cause) {
    throw formError(`could not be converted to JSON Schema: ${cause instanceof Error ? cause.message : cause}`, cause);
  }
  if (typeof converted !== 'object' || converted === null || Array.isArray(converted)) {
    throw formError('was converted to something that is not a JSON Schema object');
  }
  return withoutFormPatterns(converted as JsonSchema);
}

function withoutFormPatterns(schema: JsonSchema): JsonSchema {
  const copy: JsonSchema = {};
  const dropPattern = typeof schema.format === 'string' && CHECKED_FORMATS.has(schema.format);
  for (const [keyword, value] of Object.entries(schema)) {
    if (keyword === 'pattern' && dropPattern) continue;
    copy[keyword] = DATA_KEYWORDS.has(keyword) ? value : withoutFormPatternsIn(value);
  }
  return copy;
}

function withoutFormPatternsIn(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutFormPatternsIn);
  if (typeof value === 'object' && value !== null) return withoutFormPatterns(value as JsonSchema);
  return value;
}

function formError(problem: string, cause?: unknown): PausepointError {
  return new PausepointError(`Invalid form: form.schema ${problem}.`, {
    code: 'invalid_form',
    details: { fields: [{ field: 'form.schema', problem }] },
    cause,
  });
}

/**
 * The answered values parsed by the form's Standard Schema: its output (with
 * its defaults and transforms). Throws a `FormValuesError` when they do not pass.
 */
export async function parseFormValues<Schema extends StandardSchemaWithJson>(
  schema: Schema,
  values: unknown,
): Promise<StandardOutput<Schema>> {
  const result = await schema['~standard'].validate(values);
  if (result.issues === undefined) return result.value;
  const fields = result.issues.map((issue) => ({
    field: ['values', ...(issue.path ?? []).map((part) => String(typeof part === 'object' ? part.key : part))].join(
      '.',
    ),
    problem: issue.message,
  }));
  throw new FormValuesError(
    `The answer's values do not pass the form's schema: ${fields.map((f) => `${f.field}: ${f.problem}`).join('; ')}.`,
    fields,
  );
}
