import { describe, expect, it } from 'vitest';
import {
  FORM_CACHE_SIZE,
  formCacheStats,
  formDefinitionProblems,
  formProblems,
  MAX_FORM_PROPERTIES,
  sameValues,
} from '../../src/domain/form.js';
import { answerProblems, answerValues } from '../../src/domain/pause.js';

// The rules of a pause's form (DESIGN.md, "Typed answers"): what a schema may
// be, the values' problems in plain words keyed by field, and the cache that
// compiles each distinct schema once.

const OPTIONS = ['approve', 'reject'];
const refund = {
  type: 'object',
  properties: {
    amount: { type: 'number', minimum: 1, maximum: 5000, title: 'Amount' },
    note: { type: 'string', maxLength: 5, 'x-multiline': true },
    email: { type: 'string', format: 'email' },
    currency: {
      oneOf: [
        { const: 'usd', title: 'US dollar' },
        { const: 'eur', title: 'Euro' },
      ],
    },
    tags: { type: 'array', items: { enum: ['vip', 'late'] }, uniqueItems: true },
    args: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
  },
  required: ['amount'],
  additionalProperties: false,
};
const fieldsOf = (problems: { field: string }[]) => problems.map((p) => p.field);
/** A schema no other test uses, so the cache has not seen it. */
const fresh = (tag: string) => ({ type: 'object', properties: { [`f_${tag}_${Math.random()}`]: { type: 'string' } } });

describe('a form as created', () => {
  it('accepts a schema of the flat subset and of nested tool arguments, with values that meet it', () => {
    expect(formDefinitionProblems({ schema: refund, values: { amount: 10, args: { n: 1 } } }, OPTIONS)).toEqual([]);
    expect(formDefinitionProblems({ schema: refund, values: { amount: 10 }, on: ['approve'] }, OPTIONS)).toEqual([]);
    // Proposed values are optional: the pages draw the form's inputs empty.
    expect(formDefinitionProblems({ schema: refund, on: ['approve'] }, OPTIONS)).toEqual([]);
  });

  it('refuses each thing DESIGN.md names, naming the field', () => {
    const cases: [unknown, string][] = [
      [{ schema: { type: 'array', items: {} } }, 'form.schema.type'],
      [{ schema: { type: 'object' } }, 'form.schema.properties'],
      [
        {
          schema: {
            type: 'object',
            properties: Object.fromEntries(
              Array.from({ length: MAX_FORM_PROPERTIES + 1 }, (_, i) => [`f${i}`, { type: 'string' }]),
            ),
          },
        },
        'form.schema.properties',
      ],
      [
        { schema: { type: 'object', properties: { a: { type: 'string', description: 'x'.repeat(17_000) } } } },
        'form.schema',
      ],
      [{ schema: { type: 'object', properties: { a: { type: 'strng' } } } }, 'form.schema.properties.a'],
      [
        { schema: { type: 'object', properties: { a: { type: 'string', colour: 'red' } } } },
        'form.schema.properties.a.colour',
      ],
      [{ schema: refund, values: { amount: 0 } }, 'form.values.amount'],
      [{ schema: refund, on: ['maybe'] }, 'form.on.0'],
    ];
    for (const [form, field] of cases) {
      expect(fieldsOf(formDefinitionProblems(form, OPTIONS)), JSON.stringify(form).slice(0, 80)).toContain(field);
    }
  });

  it('refuses what could reach out or make validation slow', () => {
    const property = (schema: object) => ({ schema: { type: 'object', properties: { a: schema } }, values: {} });
    const cases: [unknown, string][] = [
      [property({ $ref: 'https://example.com/schema.json' }), 'form.schema.properties.a.$ref'],
      [property({ $async: true, type: 'string' }), 'form.schema.properties.a.$async'],
      [property({ $id: 'https://example.com/a', type: 'string' }), 'form.schema.properties.a.$id'],
      // What RE2 cannot run in linear time (a backreference, a lookahead) does not compile.
      [property({ type: 'string', pattern: '^(x)\\1$' }), 'form.schema.properties.a'],
      [property({ type: 'string', pattern: '^(?=a)' }), 'form.schema.properties.a'],
      [property({ type: 'object', patternProperties: { '^(x)\\1': {} } }), 'form.schema.properties.a'],
      [
        property({ type: 'array', items: { type: 'object' }, uniqueItems: true }),
        'form.schema.properties.a.uniqueItems',
      ],
      [
        { schema: { ...fresh('s'), $schema: 'http://json-schema.org/draft-07/schema#' }, values: {} },
        'form.schema.$schema',
      ],
    ];
    for (const [form, field] of cases) {
      expect(fieldsOf(formDefinitionProblems(form, OPTIONS)), JSON.stringify(form)).toEqual([field]);
    }
    // A reference within the schema is fine.
    const local = {
      type: 'object',
      $defs: { money: { type: 'number', minimum: 0 } },
      properties: { a: { $ref: '#/$defs/money' } },
    };
    expect(formDefinitionProblems({ schema: local, values: { a: 5 } }, OPTIONS)).toEqual([]);
    expect(fieldsOf(formDefinitionProblems({ schema: local, values: { a: -1 } }, OPTIONS))).toEqual(['form.values.a']);
  });

  it('refuses every keyword it does not know, wherever it hides, and formats beyond the four it checks', () => {
    const property = (schema: object) => ({ schema: { type: 'object', properties: { a: schema } }, values: {} });
    const hidden = {
      schema: {
        type: 'object',
        properties: { a: { type: 'string' } },
        dependencies: { a: { properties: { b: { type: 'string', pattern: '^(a+)+$' } } } },
      },
    };
    expect(fieldsOf(formDefinitionProblems(hidden, OPTIONS))).toEqual(['form.schema.dependencies']);
    const cases: [unknown, string][] = [
      [
        property({ type: 'object', patternProperties: { '^x': { $anchor: 'a' } } }),
        'form.schema.properties.a.patternProperties.^x.$anchor',
      ],
      [property({ type: 'string', $anchor: 'a' }), 'form.schema.properties.a.$anchor'],
      [property({ type: 'string', format: 'hostname' }), 'form.schema.properties.a.format'],
      [
        property({ type: 'array', items: { type: 'string', $dynamicRef: '#x' } }),
        'form.schema.properties.a.items.$dynamicRef',
      ],
    ];
    for (const [form, field] of cases) {
      expect(fieldsOf(formDefinitionProblems(form, OPTIONS)), JSON.stringify(form)).toEqual([field]);
    }
    for (const format of ['email', 'uri', 'date', 'date-time']) {
      expect(formDefinitionProblems(property({ type: 'string', format }), OPTIONS), format).toEqual([]);
    }
  });
});

describe('pattern and patternProperties', () => {
  const withPattern = (pattern: string) => ({ type: 'object', properties: { a: { type: 'string', pattern } } });

  it('check the values, unanchored as JSON Schema says, and name the field', () => {
    const form = { schema: withPattern('[A-Z]{3}-\\d+'), values: { a: 'ticket ABC-12' } };
    expect(formDefinitionProblems(form, OPTIONS)).toEqual([]);
    expect(formDefinitionProblems({ ...form, values: { a: 'abc-12' } }, OPTIONS)).toEqual([
      { field: 'form.values.a', problem: 'is not in the expected form' },
    ]);
    const keys = { type: 'object', patternProperties: { '^n_': { type: 'number' } }, properties: {} };
    const nested = { type: 'object', properties: { a: keys } };
    expect(fieldsOf(formProblems({ schema: nested }, { a: { n_1: 'x' } }, 'values'))).toEqual(['values.a.n_1']);
  });

  it('run in time linear in the text: a pattern that backtracks exponentially in JavaScript answers at once', () => {
    // Only RE2 refuses a lookahead: were the engine JavaScript's, this fails here rather than hang below.
    expect(fieldsOf(formDefinitionProblems({ schema: withPattern('^(?=a)') }, OPTIONS))).toEqual([
      'form.schema.properties.a',
    ]);
    // JavaScript's RegExp would not finish on a thousandth of this text (its time doubles with each 'a').
    const text = `${'a'.repeat(60_000)}!`;
    const form = { schema: withPattern('^(a+)+$'), values: null, on: ['approve'] };
    expect(formProblems(form, { a: text }, 'values')).toEqual([
      { field: 'values.a', problem: 'is not in the expected form' },
    ]);
    expect(formProblems(form, { a: 'a'.repeat(60_000) }, 'values')).toEqual([]);
  });
});

describe("a form's values", () => {
  it('names every bad field in plain words, keyed by its path', () => {
    const problems = formProblems(
      { schema: refund },
      { amount: 0, note: 'too long', email: 'nope', currency: 'gbp', tags: ['vip', 'vip'], args: { n: 'x' }, extra: 1 },
    );
    expect(Object.fromEntries(problems.map((p) => [p.field, p.problem]))).toEqual({
      amount: 'must be at least 1',
      note: 'must be at most 5 characters long',
      email: 'must be an email address',
      currency: 'must be one of: usd, eur',
      tags: 'must not repeat an item (tags.0 and tags.1 are the same)',
      'args.n': 'must be a whole number',
      extra: 'is not a known field',
    });
    expect(formProblems({ schema: refund }, {})).toEqual([{ field: 'amount', problem: 'is required' }]);
    expect(formProblems({ schema: refund }, { amount: 1 }, 'values')).toEqual([]);
    expect(formProblems({ schema: refund }, { amount: 'ten' }, 'values')).toEqual([
      { field: 'values.amount', problem: 'must be a number' },
    ]);
    expect(formProblems({ schema: refund }, [1], 'values')).toEqual([
      { field: 'values', problem: 'must be an object of the form’s fields' },
    ]);
  });

  it('compares objects with fields named toString or valueOf as JSON, never calling them (ajv#2624)', () => {
    const schema = {
      type: 'object',
      properties: {
        rows: { type: 'array', maxItems: 4, uniqueItems: true, items: { type: 'object' } },
        pinned: { const: { toString: 'a' } },
        picked: { enum: [{ valueOf: 1 }, { valueOf: 2, toString: null }] as object[] },
      },
    };
    expect(
      formProblems(
        { schema },
        { rows: [{ toString: '' }, { valueOf: 0 }], pinned: { toString: 'a' }, picked: { valueOf: 1 } },
      ),
    ).toEqual([]);
    expect(
      Object.fromEntries(
        formProblems(
          { schema },
          { rows: [{ toString: '' }, { toString: '' }], pinned: { toString: 'b' }, picked: { valueOf: '' } },
        ).map((p) => [p.field, p.problem]),
      ),
    ).toEqual({
      rows: 'must not repeat an item (rows.0 and rows.1 are the same)',
      pinned: 'must be {"toString":"a"}',
      picked: 'must be one of: {"valueOf":1}, {"valueOf":2,"toString":null}',
    });
  });

  it('compares values whatever the order of their keys', () => {
    expect(sameValues({ a: 1, b: { c: 2, d: 3 } }, { b: { d: 3, c: 2 }, a: 1 })).toBe(true);
    expect(sameValues({ a: 1 }, { a: 2 })).toBe(false);
  });
});

describe('an answer to a pause with a form', () => {
  const pause = {
    options: OPTIONS,
    allowText: true,
    form: { schema: refund, values: { amount: 100 }, on: ['approve'] },
    requireText: ['reject'],
  };
  it('checks values only for a choice that submits the form, and a required reason', () => {
    expect(answerProblems(pause, { choice: 'approve', text: null })).toEqual([]);
    expect(answerProblems(pause, { choice: 'approve', text: null, values: { amount: 90 } })).toEqual([]);
    expect(fieldsOf(answerProblems(pause, { choice: 'approve', text: null, values: { amount: -1 } }))).toEqual([
      'values.amount',
    ]);
    expect(fieldsOf(answerProblems(pause, { choice: 'reject', text: 'no', values: { amount: 1 } }))).toEqual([
      'values',
    ]);
    expect(answerProblems(pause, { choice: 'reject', text: null })).toEqual([
      { field: 'text', problem: 'is required: a reason must be given for "reject"' },
    ]);
    expect(
      fieldsOf(answerProblems({ ...pause, form: { ...pause.form, values: null } }, { choice: 'approve', text: null })),
    ).toEqual(['values']);
  });
  it('records the values sent, or the proposed ones, and whether they were edited', () => {
    expect(answerValues(pause, { choice: 'approve' })).toEqual({ values: { amount: 100 }, edited: false });
    expect(answerValues(pause, { choice: 'approve', values: { amount: 100 } })).toEqual({
      values: { amount: 100 },
      edited: false,
    });
    expect(answerValues(pause, { choice: 'approve', values: { amount: 90 } })).toEqual({
      values: { amount: 90 },
      edited: true,
    });
    expect(answerValues(pause, { choice: 'reject' })).toEqual({ values: null, edited: false });
  });
});

describe('the compiled schemas', () => {
  it('compiles a schema once, however often and in whatever key order it comes', () => {
    const schema = fresh('once');
    const before = formCacheStats().compilations;
    formDefinitionProblems({ schema }, OPTIONS);
    expect(formCacheStats().compilations).toBe(before + 1);
    const reordered = Object.fromEntries(Object.entries(schema).reverse());
    for (let i = 0; i < 5; i++) {
      formDefinitionProblems({ schema: reordered, values: {} }, OPTIONS);
      formProblems({ schema }, {});
    }
    expect(formCacheStats().compilations).toBe(before + 1);
  });

  it('keeps the most recently used FORM_CACHE_SIZE schemas, each under at most two keys', () => {
    const kept = fresh('kept');
    formDefinitionProblems({ schema: kept }, OPTIONS);
    for (let i = 0; i < FORM_CACHE_SIZE + 10; i++) {
      formDefinitionProblems({ schema: fresh(`many${i}`) }, OPTIONS);
      if (i % 50 === 0) formProblems({ schema: kept }, {}); // used again: stays
    }
    expect(formCacheStats().keys).toBe(2 * FORM_CACHE_SIZE);
    const before = formCacheStats().compilations;
    formProblems({ schema: kept }, {});
    expect(formCacheStats().compilations).toBe(before);
  });
});
