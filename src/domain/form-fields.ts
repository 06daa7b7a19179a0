import { isObject, type JsonObject, MAX_FORM_VALUES_BYTES } from './form.js';
import { MAX_TEXT_LENGTH } from './pause.js';
import type { FieldProblem } from './problems.js';

// A form's fields as a page draws them (DESIGN.md, "Typed answers"), and the
// text a browser posts back turned into typed values. Both directions live
// here, so that what an input is prefilled with and how its text is read
// back always agree: an input left as it was prefilled keeps the proposed
// value exactly (a date-time's zone, a number's spelling, a JSON text's
// layout, a field the proposal left out). The values are then checked
// against the schema by formProblems, as the API's are.

/** How a field is drawn, chosen from its subschema. */
export type FieldKind =
  | { kind: 'text'; input: 'text' | 'email' | 'url' | 'date' | 'datetime-local' }
  | { kind: 'multiline' }
  /** One of a list: enum, or oneOf of {const, title}. */
  | { kind: 'choice'; choices: Choice[] }
  | { kind: 'number'; integer: boolean }
  | { kind: 'boolean' }
  /** Several of a list: an array of enum strings. */
  | { kind: 'choices'; choices: Choice[] }
  /** Anything else (an object, an array of objects): JSON in a text box, checked against the subschema. */
  | { kind: 'json' };

export interface Choice {
  /** The option's text in the form: the value itself for a string, else its JSON. */
  text: string;
  value: unknown;
  label: string;
}

export interface FormField {
  name: string;
  schema: JsonObject;
  required: boolean;
  /** The subschema's `title`, else the field's name. */
  label: string;
  /** The subschema's `description`. */
  hint?: string;
  kind: FieldKind;
  /** Whether its type includes "null": then an empty input stands for null, and may be left empty. */
  nullable: boolean;
}

/** What a browser posts for one field: nothing, one text, or several (checkboxes). */
export type PostedField = string | string[] | undefined;
/** The posted fields of a form, by field name. */
export type PostedFields = Record<string, PostedField>;

/** The name prefix of a form field's input, so that `choice`, `text` or `csrf` are never a field's name. */
export const FIELD_PREFIX = 'values.';
/**
 * The most bytes a page's answer may post, form-encoded: a form's values (at
 * most MAX_FORM_VALUES_BYTES as JSON) and a comment of MAX_TEXT_LENGTH
 * characters, each character up to nine bytes once percent-encoded.
 */
export const MAX_POSTED_FORM_BYTES = 3 * MAX_FORM_VALUES_BYTES + 9 * MAX_TEXT_LENGTH + 16 * 1024;
/** A hidden input (name and value) that says the page drew the form: only then are its fields read. */
export const FORM_DRAWN = { name: 'form', value: 'drawn' } as const;

const isScalar = (value: unknown) => value === null || ['string', 'number', 'boolean'].includes(typeof value);

/** The one type a subschema names, ignoring "null" (`["string", "null"]` is a string). */
function typeOf(schema: JsonObject): string | undefined {
  if (typeof schema.type === 'string') return schema.type;
  if (!Array.isArray(schema.type)) return undefined;
  const types = schema.type.filter((type) => type !== 'null');
  return types.length === 1 && typeof types[0] === 'string' ? types[0] : undefined;
}

/** Whether a subschema's type includes "null" (and its enum, if any, lists null). */
function isNullable(schema: JsonObject): boolean {
  if (!Array.isArray(schema.type) || !schema.type.includes('null')) return false;
  return !Array.isArray(schema.enum) || schema.enum.includes(null);
}

/** A name's own value in an object, never one inherited (`constructor`, `toString`). */
export const own = <T>(object: Record<string, T> | null | undefined, name: string): T | undefined =>
  object && Object.hasOwn(object, name) ? object[name] : undefined;

/** Sets a name's own value, `__proto__` included, which plain assignment would take as the prototype. */
function setOwn<T>(object: Record<string, T>, name: string, value: T): void {
  Object.defineProperty(object, name, { value, enumerable: true, writable: true, configurable: true });
}

const choiceText = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));

/** The choices of an `enum` of plain values, or of a oneOf of {const, title}; undefined for neither. */
function choicesOf(schema: JsonObject): Choice[] | undefined {
  if (Array.isArray(schema.enum) && schema.enum.length > 0 && schema.enum.every(isScalar)) {
    return schema.enum.map((value) => ({ text: choiceText(value), value, label: choiceText(value) }));
  }
  const branches = schema.oneOf ?? schema.anyOf;
  if (Array.isArray(branches) && branches.length > 0 && branches.every((b) => isObject(b) && 'const' in b)) {
    return (branches as JsonObject[])
      .filter((branch) => isScalar(branch.const))
      .map((branch) => ({
        text: choiceText(branch.const),
        value: branch.const,
        label: typeof branch.title === 'string' ? branch.title : choiceText(branch.const),
      }));
  }
  return undefined;
}

const TEXT_INPUTS: Record<string, 'email' | 'url' | 'date' | 'datetime-local'> = {
  email: 'email',
  uri: 'url',
  date: 'date',
  'date-time': 'datetime-local',
};

export function fieldKind(schema: JsonObject): FieldKind {
  const choices = choicesOf(schema);
  // A nullable field's empty choice is its null.
  if (choices)
    return { kind: 'choice', choices: isNullable(schema) ? choices.filter((c) => c.value !== null) : choices };
  const type = typeOf(schema);
  if (type === 'string') {
    if (schema['x-multiline'] === true) return { kind: 'multiline' };
    return { kind: 'text', input: TEXT_INPUTS[schema.format as string] ?? 'text' };
  }
  if (type === 'number' || type === 'integer') return { kind: 'number', integer: type === 'integer' };
  if (type === 'boolean') return { kind: 'boolean' };
  if (type === 'array' && isObject(schema.items)) {
    const items = choicesOf(schema.items);
    if (items?.every((choice) => typeof choice.value === 'string')) return { kind: 'choices', choices: items };
  }
  return { kind: 'json' };
}

/** The fields of a form's schema, in the order of its properties. */
export function formFields(schema: JsonObject): FormField[] {
  const properties = isObject(schema.properties) ? schema.properties : {};
  const required = Array.isArray(schema.required) ? schema.required : [];
  return Object.entries(properties).map(([name, property]) => {
    const sub = isObject(property) ? property : {};
    return {
      name,
      schema: sub,
      required: required.includes(name),
      label: typeof sub.title === 'string' && sub.title.trim() ? sub.title : name,
      ...(typeof sub.description === 'string' && sub.description.trim() ? { hint: sub.description } : {}),
      kind: fieldKind(sub),
      nullable: isNullable(sub),
    };
  });
}

/** A date-time in UTC as a datetime-local input holds it (seconds, no zone); the text itself if it is no date-time. */
function localDateTime(value: string): string {
  const at = Date.parse(value);
  return Number.isNaN(at) ? value : new Date(at).toISOString().slice(0, 19);
}

/**
 * What a field's input holds for a value (undefined: the value is absent):
 * one text, or for checkboxes the texts of those checked.
 */
export function fieldText(field: FormField, value: unknown): string | string[] {
  const { kind } = field;
  if (kind.kind === 'boolean') return value === true ? ['true'] : [];
  if (kind.kind === 'choices') {
    return Array.isArray(value) ? kind.choices.filter((c) => value.includes(c.value)).map((c) => c.text) : [];
  }
  if (value === undefined || value === null) return '';
  if (kind.kind === 'json') return JSON.stringify(value, null, 2);
  if (kind.kind === 'choice') return choiceText(value);
  if (kind.kind === 'text' && kind.input === 'datetime-local' && typeof value === 'string') return localDateTime(value);
  return typeof value === 'string' ? value : JSON.stringify(value);
}

const listOf = (posted: PostedField): string[] =>
  posted === undefined ? [] : Array.isArray(posted) ? posted : [posted];
/** Line ends as LF: browsers send a text area's as CRLF. */
const lfLineEnds = (text: string) => text.replace(/\r\n?/g, '\n');
/** A text box's text as posted. */
const textOf = (posted: PostedField) => lfLineEnds(listOf(posted)[0] ?? '');

const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;
const DATETIME_LOCAL = /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?$/;

/** The typed value of a field's posted input: a value, nothing (left empty), or why it cannot be read. */
type Read = { value: unknown } | { omitted: true } | { problem: string };

function readField(field: FormField, posted: PostedField): Read {
  const { kind } = field;
  if (kind.kind === 'boolean') return { value: listOf(posted).includes('true') };
  if (kind.kind === 'choices') {
    const texts = listOf(posted);
    const unknown = texts.filter((text) => !kind.choices.some((c) => c.text === text));
    if (unknown.length > 0) return { problem: 'must be among the choices shown' };
    return { value: kind.choices.filter((c) => texts.includes(c.text)).map((c) => c.value) };
  }
  const text = textOf(posted);
  if (text === '') return field.nullable ? { value: null } : { omitted: true };
  switch (kind.kind) {
    case 'choice': {
      const choice = kind.choices.find((c) => c.text === text);
      return choice ? { value: choice.value } : { problem: 'must be one of the choices shown' };
    }
    case 'number': {
      const trimmed = text.trim();
      if (!DECIMAL.test(trimmed)) return { problem: kind.integer ? 'must be a whole number' : 'must be a number' };
      const value = Number(trimmed);
      return Number.isFinite(value) ? { value } : { problem: 'is too large a number' };
    }
    case 'json':
      try {
        return { value: JSON.parse(text) };
      } catch (error) {
        return { problem: `is not valid JSON: ${error instanceof Error ? error.message : String(error)}` };
      }
    case 'text':
      // A datetime-local input's text has no zone: the page says its times are UTC.
      if (kind.input === 'datetime-local' && DATETIME_LOCAL.test(text)) {
        return { value: `${text.length === 16 ? `${text}:00` : text}Z` };
      }
      return { value: text };
    case 'multiline':
      return { value: text };
  }
}

/** Two datetime-local texts of the same instant: a browser may write the value it was given otherwise (no `:00`). */
const sameInstant = (a: string, b: string) =>
  DATETIME_LOCAL.test(a) && DATETIME_LOCAL.test(b) && Date.parse(`${a}Z`) === Date.parse(`${b}Z`);

/** Whether a field was posted as it was prefilled with `text`. */
function samePosted(field: FormField, posted: PostedField, text: string | string[]): boolean {
  if (Array.isArray(text)) {
    return listOf(posted).length === text.length && listOf(posted).every((each) => text.includes(each));
  }
  const sent = textOf(posted);
  if (sent === lfLineEnds(text)) return true;
  return field.kind.kind === 'text' && field.kind.input === 'datetime-local' && sameInstant(sent, text);
}

/**
 * The values a form's posted fields stand for, and each field's text that
 * cannot be read (keyed by the field's name, as formProblems keys them with
 * an empty `at`). An empty field is left out (the schema then says whether it
 * was required), or null when its type includes "null"; an unchecked box is
 * false and no checked box an empty list. With proposed values, a field posted
 * as it was prefilled keeps the proposed value, or its absence, and the
 * proposed keys that are no field are kept.
 */
export function valuesFromFields(
  schema: JsonObject,
  fields: PostedFields,
  proposed: JsonObject | null = null,
): { values: JsonObject; problems: FieldProblem[] } {
  const schemaFields = formFields(schema);
  const values: JsonObject = {};
  // Proposed keys that are no field stay, as they do when the API's answer leaves the values out.
  for (const [name, value] of Object.entries(proposed ?? {})) {
    if (!schemaFields.some((field) => field.name === name)) setOwn(values, name, value);
  }
  const problems: FieldProblem[] = [];
  for (const field of schemaFields) {
    const posted = own(fields, field.name);
    if (proposed !== null && samePosted(field, posted, fieldText(field, own(proposed, field.name)))) {
      if (Object.hasOwn(proposed, field.name)) setOwn(values, field.name, proposed[field.name]);
      continue;
    }
    const read = readField(field, posted);
    if ('problem' in read) problems.push({ field: field.name, problem: read.problem });
    else if ('value' in read) setOwn(values, field.name, read.value);
  }
  return { values, problems };
}

/** The form fields of a posted body (inputs named FIELD_PREFIX + the field's name); undefined unless the page drew the form. */
export function postedFields(body: Record<string, unknown>): PostedFields | undefined {
  if (body[FORM_DRAWN.name] !== FORM_DRAWN.value) return undefined;
  const fields: PostedFields = {};
  for (const [key, value] of Object.entries(body)) {
    if (!key.startsWith(FIELD_PREFIX)) continue;
    if (typeof value === 'string' || (Array.isArray(value) && value.every((each) => typeof each === 'string')))
      setOwn<PostedField>(fields, key.slice(FIELD_PREFIX.length), value);
  }
  return fields;
}
