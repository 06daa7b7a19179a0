import type { FieldProblem } from './problems.js';

// Ajv's errors in plain words, one {field, problem} per bad field: for the
// API's request bodies (src/http/validation.ts) and for the values of a
// pause's form (form.ts), so both say the same thing the same way.

/** An error as ajv reports it: the parts the wording reads. */
export interface SchemaError {
  keyword: string;
  instancePath: string;
  schemaPath: string;
  params: Record<string, unknown>;
}

type ValidationError = SchemaError;
type Params = Record<string, unknown>;

/**
 * Turns ajv's errors into one {field, problem} pair per bad field, in plain
 * words a person can act on (docs/errors.md). Fields are named by their path
 * with dots (`notify.email.1`); a problem with the whole part is named after
 * the part (`body`).
 */
export function describeValidation(errors: readonly SchemaError[], part: string | undefined): FieldProblem[] {
  const problems = new Map<string, string>();
  for (const { field, problem } of plainErrors(errors, part)) {
    if (!problems.has(field)) problems.set(field, problem);
  }
  return [...problems].map(([field, problem]) => ({ field, problem }));
}

/**
 * The errors worth telling, with their wording: the errors of the branches of
 * an anyOf/oneOf are folded into the one error of the anyOf/oneOf itself.
 */
function plainErrors(errors: readonly ValidationError[], part: string | undefined): FieldProblem[] {
  const choicePaths = new Set(errors.filter(isChoice).map((e) => e.schemaPath));
  const isBranch = (error: ValidationError) => {
    for (let at = error.schemaPath.indexOf('/'); at !== -1; at = error.schemaPath.indexOf('/', at + 1)) {
      if (choicePaths.has(error.schemaPath.slice(0, at))) return true;
    }
    return false;
  };
  // A choice's message uses what its branches say of the same value; deeper
  // errors in a branch would name other fields.
  const branchesByValue = new Map<string, ValidationError[]>();
  const told: { error: ValidationError; field: string }[] = [];
  for (const error of errors) {
    if (isBranch(error)) {
      const branches = branchesByValue.get(error.instancePath) ?? [];
      branches.push(error);
      branchesByValue.set(error.instancePath, branches);
    } else if (error.keyword !== 'if') {
      told.push({ error, field: fieldOf(error, part) });
    }
  }
  return told.map(({ error, field }) => {
    if (!isChoice(error)) return { field, problem: keywordProblem(error.keyword, error.params as Params, field) };
    const branches = (branchesByValue.get(error.instancePath) ?? []).filter((e) =>
      e.schemaPath.startsWith(`${error.schemaPath}/`),
    );
    return { field, problem: choiceProblem(error, branches, field) };
  });
}

const isChoice = (error: ValidationError) => error.keyword === 'anyOf' || error.keyword === 'oneOf';

function fieldOf(error: ValidationError, part: string | undefined): string {
  const params = error.params as Params;
  const path = error.instancePath
    .split('/')
    .slice(1)
    .map((segment) => segment.replaceAll('~1', '/').replaceAll('~0', '~'));
  const child = params.missingProperty ?? params.additionalProperty ?? params.propertyName;
  if (typeof child === 'string') path.push(child);
  return path.length > 0 ? path.join('.') : (part ?? 'body');
}

/** One sentence for a value that matched none of the allowed forms. */
function choiceProblem(choice: ValidationError, branches: ValidationError[], field: string): string {
  if ((choice.params as Params).passingSchemas) return 'matches more than one of the allowed forms';
  if (branches.length > 0 && branches.every((e) => e.keyword === 'const' || e.keyword === 'enum')) {
    const allowed = branches.flatMap((e) =>
      e.keyword === 'const' ? [(e.params as Params).allowedValue] : ((e.params as Params).allowedValues as unknown[]),
    );
    return `must be one of: ${allowed.map(shown).join(', ')}`;
  }
  const wordings = [...new Set(branches.map((e) => keywordProblem(e.keyword, e.params as Params, field)))];
  if (wordings.length === 0) return 'does not match any of the allowed forms';
  if (wordings.every((w) => w.startsWith('must be '))) {
    return `must be ${wordings.map((w) => w.slice('must be '.length)).join(' or ')}`;
  }
  return wordings.join(', or ');
}

const shown = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));
const plural = (count: unknown, noun: string) => `${count} ${noun}${count === 1 ? '' : 's'}`;

const TYPE_NAMES: Record<string, string> = {
  string: 'a string',
  integer: 'a whole number',
  number: 'a number',
  boolean: 'true or false',
  object: 'an object',
  array: 'an array',
  null: 'null',
};

const FORMAT_NAMES: Record<string, string> = {
  email: 'an email address',
  'date-time': 'a date and time such as 2026-11-25T22:13:57.000Z',
  date: 'a date such as 2026-11-25',
  time: 'a time such as 22:13:57Z',
  uri: 'a URL',
  url: 'a URL',
  uuid: 'a UUID',
  ipv4: 'an IPv4 address',
  ipv6: 'an IPv6 address',
  hostname: 'a host name',
};

/** What one failed rule means, as a predicate of the field ("must be …", "is …"). */
function keywordProblem(keyword: string, params: Params, field: string): string {
  switch (keyword) {
    case 'required':
      return 'is required';
    case 'dependentRequired':
    case 'dependencies':
      return `is required when ${params.property} is given`;
    case 'additionalProperties':
    case 'unevaluatedProperties':
      return 'is not a known field';
    case 'propertyNames':
      return 'is not an allowed field name';
    case 'type': {
      const types = Array.isArray(params.type) ? params.type : String(params.type).split(',');
      return `must be ${types.map((t: string) => TYPE_NAMES[t] ?? t).join(' or ')}`;
    }
    case 'minLength':
      return `must be at least ${plural(params.limit, 'character')} long`;
    case 'maxLength':
      return `must be at most ${plural(params.limit, 'character')} long`;
    case 'minimum':
      return `must be at least ${params.limit}`;
    case 'maximum':
      return `must be at most ${params.limit}`;
    case 'exclusiveMinimum':
      return `must be greater than ${params.limit}`;
    case 'exclusiveMaximum':
      return `must be less than ${params.limit}`;
    case 'multipleOf':
      return `must be a multiple of ${params.multipleOf}`;
    case 'minItems':
      return `must have at least ${plural(params.limit, 'item')}`;
    case 'maxItems':
    case 'additionalItems':
    case 'unevaluatedItems':
      return `must have at most ${plural(params.limit, 'item')}`;
    case 'minProperties':
      return `must have at least ${plural(params.limit, 'field')}`;
    case 'maxProperties':
      return `must have at most ${plural(params.limit, 'field')}`;
    case 'uniqueItems':
      return repeatProblem(field, Number(params.i), Number(params.j));
    case 'enum':
      return `must be one of: ${((params.allowedValues as unknown[]) ?? []).map(shown).join(', ')}`;
    case 'const':
      return `must be ${shown(params.allowedValue)}`;
    case 'format':
      return `must be ${FORMAT_NAMES[String(params.format)] ?? `a valid ${params.format}`}`;
    case 'pattern':
      return 'is not in the expected form';
    case 'contains':
    case 'minContains':
      return 'does not contain an allowed item';
    case 'maxContains':
      return 'contains too many of one kind of item';
    case 'not':
    case 'false schema':
      return 'is not allowed';
    default:
      return 'is not valid';
  }
}

/** The problem of a list that holds the same item at indexes `i` and `j`. */
export function repeatProblem(field: string, i: number, j: number): string {
  const [first, second] = [i, j].sort((a, b) => a - b);
  return `must not repeat an item (${field}.${first} and ${field}.${second} are the same)`;
}
