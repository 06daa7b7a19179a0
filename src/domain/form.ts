import './ajv-equal.js';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import type { RegExpEngine } from 'ajv/dist/types/index.js';
import addFormats from 'ajv-formats';
import { RE2JS } from 're2js';
import { canonicalJson } from './canonical-json.js';
import type { FieldProblem } from './problems.js';
import { describeValidation } from './schema-errors.js';
import { formatBytes } from './units.js';

// A pause's form (DESIGN.md, "Typed answers"): a JSON Schema the answer's
// `values` must meet, the values proposed, and the options that submit it.
// The rules live here once, for the API, the pages, the inbox and MCP:
// formDefinitionProblems checks a form as created, formProblems a form's
// values as submitted (each bad field in plain words, keyed by its path).
//
// Schemas are compiled by Ajv (draft 2020-12, strict) once per distinct
// schema: compiled validators are kept by the schema's canonical JSON (and
// its JSON as sent, so a schema sent again is found without sorting it), the
// most recently used FORM_CACHE_SIZE of them at least. A schema may use only
// the keywords below (FORM_KEYWORDS and those holding schemas), so that a
// developer's schema can neither reach out nor make validation slow:
// - no `$async`, `$id`, `$anchor` or dynamic references: a form's schema
//   stands alone and validates at once; `$ref` only within it (`#…`);
// - `pattern` and `patternProperties` run on RE2JS, not JavaScript's RegExp:
//   a backtracking engine can take exponential time on a crafted text, and
//   a reviewer's answer is text; RE2 takes time linear in the text, and
//   refuses what it cannot do so (backreferences, lookaround), which is
//   then refused as the property's compile error; formats are limited to
//   email, uri, date and date-time, checked by ajv-formats' fast expressions;
// - `uniqueItems` on an array of anything but plain values needs a
//   `maxItems` of at most MAX_UNIQUE_ITEMS: comparing objects pairwise is
//   quadratic.

export type JsonObject = Record<string, unknown>;

/** A pause's form, as stored and shown: `on` is always the full list of options that submit it. */
export interface Form {
  schema: JsonObject;
  /** The proposed answer, shown prefilled; null when none was proposed. */
  values: JsonObject | null;
  on: string[];
}

export const OPTION_STYLES = ['primary', 'danger'] as const;
export type OptionStyle = (typeof OPTION_STYLES)[number];

/** How an option is shown: its own entry of options_style only (an option may be named `toString` or `__proto__`). */
export const styleOf = (styles: Record<string, OptionStyle>, option: string): OptionStyle | undefined =>
  Object.hasOwn(styles, option) ? styles[option] : undefined;

/** The most fields a form may have (its schema's top-level properties). */
export const MAX_FORM_PROPERTIES = 30;
/** The most bytes a form's schema may take as JSON. */
export const MAX_FORM_SCHEMA_BYTES = 16 * 1024;
/** The most bytes a form's values (proposed or answered) may take as JSON. */
export const MAX_FORM_VALUES_BYTES = 64 * 1024;
/** How many compiled schemas are kept, at least: each under at most two keys (its text as sent, its canonical text). */
export const FORM_CACHE_SIZE = 256;
/** The longest array of objects or arrays `uniqueItems` may check. */
export const MAX_UNIQUE_ITEMS = 256;

const DRAFT_2020_12 = 'https://json-schema.org/draft/2020-12/schema';
/** The string formats a form may check (DESIGN.md). */
const FORMATS = ['email', 'uri', 'date', 'date-time'];

/**
 * Ajv's regular expressions (`pattern`, `patternProperties`) through RE2JS:
 * linear time in the text. Ajv keeps one compiled expression per
 * `toString()`, so each says its own pattern.
 */
const linearRegExp: RegExpEngine = Object.assign(
  (pattern: string) => {
    const compiled = RE2JS.compile(pattern);
    return { test: (text: string) => compiled.test(text), toString: () => `RE2JS /${pattern}/` };
  },
  { code: 'RE2JS.compile' },
);

const ajv = new Ajv2020({
  code: { regExp: linearRegExp },
  strict: true,
  allErrors: true, // every bad field named
  allowUnionTypes: true, // `type: ["string", "null"]`, common in tool arguments
  addUsedSchema: false,
  coerceTypes: false,
  useDefaults: false, // validating never changes the values
  removeAdditional: false,
  ownProperties: true, // a field named `constructor` or `toString` is the values' own, never the inherited function
});
((addFormats as any).default ?? addFormats)(ajv, { mode: 'fast', formats: FORMATS });
ajv.addKeyword({ keyword: 'x-multiline', schemaType: 'boolean' });

/** Keywords whose value is a schema, a list of schemas, or a map of names to schemas. */
const SCHEMA_KEYWORDS = new Set([
  'items',
  'contains',
  'additionalProperties',
  'propertyNames',
  'not',
  'if',
  'then',
  'else',
  'unevaluatedItems',
  'unevaluatedProperties',
]);
const SCHEMA_LIST_KEYWORDS = new Set(['prefixItems', 'allOf', 'anyOf', 'oneOf']);
const SCHEMA_MAP_KEYWORDS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);
/** The keywords a form's schema may use that hold no schema; any keyword not here nor above is refused. */
const FORM_KEYWORDS = new Set([
  '$schema',
  '$ref',
  '$comment',
  'type',
  'enum',
  'const',
  'title',
  'description',
  'default',
  'examples',
  'deprecated',
  'readOnly',
  'writeOnly',
  'required',
  'dependentRequired',
  'minLength',
  'maxLength',
  'pattern',
  'format',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minItems',
  'maxItems',
  'uniqueItems',
  'minContains',
  'maxContains',
  'minProperties',
  'maxProperties',
  'x-multiline',
]);
const SCALAR_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'null']);

export const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** What a schema uses that forms refuse, with where (a path with dots below `at`). */
function refusedParts(schema: unknown, at: string, problems: FieldProblem[]): void {
  if (!isObject(schema)) return;
  for (const [keyword, value] of Object.entries(schema)) {
    const field = `${at}.${keyword}`;
    if (keyword === '$ref' && !(typeof value === 'string' && value.startsWith('#'))) {
      problems.push({ field, problem: 'may only refer within the schema (a reference starting with #)' });
    } else if (keyword === '$schema' && value !== DRAFT_2020_12) {
      problems.push({ field, problem: `must be ${DRAFT_2020_12}, or left out` });
    } else if (keyword === 'format' && !FORMATS.includes(value as string)) {
      problems.push({ field, problem: `must be one of ${FORMATS.join(', ')}` });
    } else if (keyword === 'uniqueItems' && value === true && !cheapUniqueness(schema)) {
      problems.push({
        field,
        problem: `needs maxItems of at most ${MAX_UNIQUE_ITEMS}, unless the items are plain values (type string, number, integer or boolean)`,
      });
    } else if (SCHEMA_KEYWORDS.has(keyword)) {
      refusedParts(value, field, problems);
    } else if (SCHEMA_LIST_KEYWORDS.has(keyword) && Array.isArray(value)) {
      for (const [index, item] of value.entries()) refusedParts(item, `${field}.${index}`, problems);
    } else if (SCHEMA_MAP_KEYWORDS.has(keyword) && isObject(value)) {
      for (const [name, item] of Object.entries(value)) refusedParts(item, `${field}.${name}`, problems);
    } else if (!FORM_KEYWORDS.has(keyword)) {
      problems.push({ field, problem: 'is not a keyword a form’s schema may use (see the Forms guide)' });
    }
  }
}

function cheapUniqueness(schema: JsonObject): boolean {
  if (typeof schema.maxItems === 'number' && schema.maxItems <= MAX_UNIQUE_ITEMS) return true;
  const items = schema.items;
  if (!isObject(items)) return false;
  if (Array.isArray(items.enum) && items.enum.every((v) => typeof v !== 'object' || v === null)) return true;
  const types = Array.isArray(items.type) ? items.type : [items.type];
  return types.length > 0 && types.every((type) => typeof type === 'string' && SCALAR_TYPES.has(type));
}

/** A schema compiled, or why it cannot be a form's. */
type Compiled =
  | { validate: ValidateFunction; problems?: undefined }
  | { validate?: undefined; problems: FieldProblem[] };

const cache = new Map<string, Compiled>();
let compilations = 0;

/** How many schemas have been compiled since the process started, and how many keys are kept: for tests. */
export const formCacheStats = () => ({ compilations, keys: cache.size });

const compileMessage = (error: unknown) =>
  `does not compile as JSON Schema (draft 2020-12, strict): ${error instanceof Error ? error.message : String(error)}`;

function tryCompile(schema: JsonObject): ValidateFunction | Error {
  compilations += 1;
  try {
    return ajv.compile(schema);
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  } finally {
    ajv.removeSchema(schema); // Ajv keeps every schema it compiles; this cache decides what stays
  }
}

/** Every problem of a schema as a form's (named below `form.schema`), or its validator. */
function compileForm(schema: JsonObject): Compiled {
  const at = 'form.schema';
  const problems: FieldProblem[] = [];
  if (schema.type !== 'object')
    problems.push({ field: `${at}.type`, problem: 'must be "object": a form is a set of fields' });
  const properties = schema.properties;
  if (!isObject(properties) || Object.keys(properties).length === 0) {
    problems.push({ field: `${at}.properties`, problem: 'must be an object naming at least one field' });
  } else if (Object.keys(properties).length > MAX_FORM_PROPERTIES) {
    problems.push({ field: `${at}.properties`, problem: `must have at most ${MAX_FORM_PROPERTIES} fields` });
  } else if (Object.hasOwn(properties, '__proto__')) {
    // As a key of the values a page builds, it would set their prototype, not a field.
    problems.push({ field: `${at}.properties.__proto__`, problem: 'is not a name a field may have' });
  }
  refusedParts(schema, at, problems);
  if (problems.length > 0) return { problems };
  const validate = tryCompile(schema);
  if (!(validate instanceof Error)) return { validate };
  // Name the fields that do not compile on their own (beside the schema's $defs); else the schema.
  const named = Object.entries(properties as JsonObject).flatMap(([name, property]) => {
    const alone = tryCompile({ ...schema, properties: { [name]: property }, required: [] });
    return alone instanceof Error ? [{ field: `${at}.properties.${name}`, problem: compileMessage(alone) }] : [];
  });
  return { problems: named.length > 0 ? named : [{ field: at, problem: compileMessage(validate) }] };
}

/** The entry kept under this key, now the most recently used; undefined when there is none. */
function recall(key: string): Compiled | undefined {
  const hit = cache.get(key);
  if (hit) {
    cache.delete(key);
    cache.set(key, hit);
  }
  return hit;
}

function remember(key: string, entry: Compiled): void {
  cache.set(key, entry);
  if (cache.size > 2 * FORM_CACHE_SIZE) cache.delete(cache.keys().next().value as string);
}

/**
 * The schema's validator or problems, compiled at most once while it stays
 * among the most recently used. It is found by its JSON as sent (`text`, which
 * the caller has for the size check), else by its canonical JSON: the same
 * schema with its keys in another order is not compiled again, and is then
 * found by its own text too.
 */
function compiledForm(schema: JsonObject, text = JSON.stringify(schema)): Compiled {
  const sent = recall(text);
  if (sent) return sent;
  const key = canonicalJson(schema);
  let entry = key === text ? undefined : recall(key);
  if (!entry) {
    const copy = structuredClone(schema); // its own object: nothing else holds or changes it
    entry = compileForm(copy);
    remember(key, entry);
  }
  if (key !== text) remember(text, entry);
  return entry;
}

const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

/** `field` below `at`: the whole value when field is empty. */
const below = (at: string, field: string) => (at === '' ? field : field === '' ? at : `${at}.${field}`);

/**
 * Every bad field of a form's values, in plain words, keyed by the field's
 * path below `at` (`values.amount` for the API; with `at` empty, `amount`,
 * as a page shows it beside its input). The schema must be a form's, as
 * formDefinitionProblems accepted it.
 */
export function formProblems(form: Pick<Form, 'schema'>, values: unknown, at = ''): FieldProblem[] {
  return valuesProblems(compiledForm(form.schema), values, at);
}

function valuesProblems({ validate, problems }: Compiled, values: unknown, at: string): FieldProblem[] {
  if (!isObject(values)) return [{ field: at, problem: 'must be an object of the form’s fields' }];
  if (jsonBytes(values) > MAX_FORM_VALUES_BYTES) {
    return [{ field: at, problem: `must be at most ${formatBytes(MAX_FORM_VALUES_BYTES)} as JSON` }];
  }
  if (!validate) return problems.map(({ problem }) => ({ field: at, problem: `cannot be checked: ${problem}` }));
  if (validate(values)) return [];
  return describeValidation(validate.errors ?? [], '').map(({ field, problem }) => ({
    field: below(at, field),
    problem,
  }));
}

/** A form as a developer asks for it; `on` defaults to every option. */
export interface NewForm {
  schema: object;
  values?: object;
  on?: string[];
}

/**
 * Every problem of a form as created (named below `form`): the schema's, then
 * the proposed values', then `on`'s. A part that is not of its type is left
 * to the request's schema.
 */
export function formDefinitionProblems(form: unknown, options: readonly string[]): FieldProblem[] {
  if (!isObject(form) || !isObject(form.schema)) return [];
  const text = JSON.stringify(form.schema);
  if (Buffer.byteLength(text) > MAX_FORM_SCHEMA_BYTES) {
    return [{ field: 'form.schema', problem: `must be at most ${formatBytes(MAX_FORM_SCHEMA_BYTES)} as JSON` }];
  }
  const compiled = compiledForm(form.schema, text);
  const problems: FieldProblem[] = [...(compiled.problems ?? [])];
  // Without proposed values the form's inputs start empty (and an answer must send values).
  if (compiled.validate && form.values !== undefined) {
    problems.push(...valuesProblems(compiled, form.values, 'form.values'));
  }
  if (Array.isArray(form.on)) {
    form.on.forEach((option, index) => {
      if (typeof option === 'string' && !options.includes(option)) {
        problems.push({ field: `form.on.${index}`, problem: 'must be one of the options' });
      }
    });
  }
  return problems;
}

/** The form a pause stores: `on` resolved. */
export const formOf = (form: NewForm, options: readonly string[]): Form => ({
  schema: form.schema as JsonObject,
  values: (form.values as JsonObject | undefined) ?? null,
  on: form.on ?? [...options],
});

/** Whether two sets of values are the same, whatever the order of their keys. */
export const sameValues = (a: unknown, b: unknown) => canonicalJson(a) === canonicalJson(b);
