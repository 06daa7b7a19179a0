import { describe, expect, it } from 'vitest';
import { formDefinitionProblems, formProblems, type JsonObject } from '../../src/domain/form.js';
import {
  FORM_DRAWN,
  fieldKind,
  fieldText,
  formFields,
  postedFields,
  valuesFromFields,
} from '../../src/domain/form-fields.js';

// A form's fields as a page draws them, and the text a browser posts back
// turned into typed values (src/domain/form-fields.ts).

const schema: JsonObject = {
  type: 'object',
  properties: {
    name: { type: 'string', title: 'Name', maxLength: 40 },
    email: { type: 'string', format: 'email' },
    site: { type: 'string', format: 'uri' },
    day: { type: 'string', format: 'date' },
    at: { type: 'string', format: 'date-time' },
    note: { type: 'string', 'x-multiline': true },
    plan: { type: 'string', enum: ['free', 'pro'] },
    tier: {
      oneOf: [
        { const: 1, title: 'One' },
        { const: 2, title: 'Two' },
      ],
    },
    amount: { type: 'number', minimum: 0 },
    count: { type: 'integer' },
    urgent: { type: 'boolean' },
    tags: { type: 'array', items: { type: 'string', enum: ['a', 'b', 'c'] } },
    items: { type: 'array', items: { type: 'object', properties: { sku: { type: 'string' } } } },
    nullable: { type: ['string', 'null'] },
  },
  required: ['name', 'amount'],
  additionalProperties: false,
};

const kinds = Object.fromEntries(formFields(schema).map((field) => [field.name, field.kind]));

describe('formFields and fieldKind', () => {
  it('chooses an input for every kind of subschema', () => {
    expect(kinds.name).toEqual({ kind: 'text', input: 'text' });
    expect(kinds.email).toEqual({ kind: 'text', input: 'email' });
    expect(kinds.site).toEqual({ kind: 'text', input: 'url' });
    expect(kinds.day).toEqual({ kind: 'text', input: 'date' });
    expect(kinds.at).toEqual({ kind: 'text', input: 'datetime-local' });
    expect(kinds.note).toEqual({ kind: 'multiline' });
    expect(kinds.plan?.kind).toBe('choice');
    expect(kinds.tier).toEqual({
      kind: 'choice',
      choices: [
        { text: '1', value: 1, label: 'One' },
        { text: '2', value: 2, label: 'Two' },
      ],
    });
    expect(kinds.amount).toEqual({ kind: 'number', integer: false });
    expect(kinds.count).toEqual({ kind: 'number', integer: true });
    expect(kinds.urgent).toEqual({ kind: 'boolean' });
    expect(kinds.tags?.kind).toBe('choices');
    expect(kinds.items).toEqual({ kind: 'json' });
    expect(kinds.nullable).toEqual({ kind: 'text', input: 'text' });
    expect(fieldKind({ type: 'object' })).toEqual({ kind: 'json' });
    const [name] = formFields(schema);
    expect(name).toMatchObject({ name: 'name', label: 'Name', required: true });
    expect(formFields(schema).find((f) => f.name === 'email')).toMatchObject({ label: 'email', required: false });
  });
});

describe('valuesFromFields', () => {
  it('reads every kind of field into its typed value', () => {
    const { values, problems } = valuesFromFields(schema, {
      name: 'Ada',
      email: 'ada@example.com',
      site: 'https://example.com/',
      day: '2026-11-27',
      at: '2026-11-27T10:30',
      note: 'line one\r\nline two',
      plan: 'pro',
      tier: '2',
      amount: ' 12.5 ',
      count: '-3',
      urgent: 'true',
      tags: ['c', 'a'],
      items: '[{"sku": "X1"}]',
      nullable: 'n',
    });
    expect(problems).toEqual([]);
    expect(values).toEqual({
      name: 'Ada',
      email: 'ada@example.com',
      site: 'https://example.com/',
      day: '2026-11-27',
      at: '2026-11-27T10:30:00Z',
      note: 'line one\nline two',
      plan: 'pro',
      tier: 2,
      amount: 12.5,
      count: -3,
      urgent: true,
      tags: ['a', 'c'],
      items: [{ sku: 'X1' }],
      nullable: 'n',
    });
    expect(formProblems({ schema }, values)).toEqual([]);
  });

  it('names each field whose text cannot be read: a bad number, bad JSON, an unknown choice', () => {
    const { values, problems } = valuesFromFields(schema, {
      name: 'Ada',
      amount: 'twelve',
      count: '1.5e',
      items: '[{"sku": }]',
      plan: 'gold',
      tags: ['a', 'z'],
    });
    expect(problems.map((p) => p.field)).toEqual(['plan', 'amount', 'count', 'tags', 'items']);
    expect(problems.find((p) => p.field === 'amount')?.problem).toBe('must be a number');
    expect(problems.find((p) => p.field === 'count')?.problem).toBe('must be a whole number');
    expect(problems.find((p) => p.field === 'items')?.problem).toMatch(/^is not valid JSON: /);
    expect(values).toEqual({ name: 'Ada', urgent: false, nullable: null });
  });

  it('leaves out an empty field, reads an unchecked box as false and no checked box as an empty list', () => {
    const { values, problems } = valuesFromFields(schema, { name: '', amount: '0', email: '', items: '' });
    expect(problems).toEqual([]);
    expect(values).toEqual({ amount: 0, urgent: false, tags: [], nullable: null });
    // The schema then says what an empty required field means.
    expect(formProblems({ schema }, values)).toEqual([{ field: 'name', problem: 'is required' }]);
  });

  it('reads several checked boxes, and one', () => {
    expect(valuesFromFields(schema, { tags: ['b', 'a', 'c'] }).values.tags).toEqual(['a', 'b', 'c']);
    expect(valuesFromFields(schema, { tags: 'b' }).values.tags).toEqual(['b']);
  });

  it('keeps a proposed value exactly when its field is posted as it was prefilled', () => {
    const proposed: JsonObject = {
      name: 'Ada',
      amount: 1e21,
      at: '2026-11-27T10:30:00.000+01:00',
      items: [{ sku: 'X1' }],
      tags: ['b'],
    };
    const fields = formFields(schema);
    const prefilled = Object.fromEntries(fields.map((field) => [field.name, fieldText(field, proposed[field.name])]));
    expect(prefilled.at).toBe('2026-11-27T09:30:00');
    expect(prefilled.urgent).toEqual([]);
    // Text areas come back with CRLF line ends.
    const posted = { ...prefilled, items: String(prefilled.items).replaceAll('\n', '\r\n') };
    expect(valuesFromFields(schema, posted, proposed)).toEqual({ values: proposed, problems: [] });
    // A field changed is read; the unchecked box the proposal left out stays out.
    const changed = valuesFromFields(schema, { ...posted, at: '2026-11-27T11:00' }, proposed);
    expect(changed.values).toEqual({ ...proposed, at: '2026-11-27T11:00:00Z' });
    // Without proposed values, an unchecked box is false.
    expect(valuesFromFields(schema, posted, null).values.urgent).toBe(false);
  });

  it('takes the fields of a posted body only when the page drew the form', () => {
    const body = { choice: 'approve', text: 'ok', 'values.amount': '5', 'values.tags': ['a', 'b'], csrf: 'x' };
    expect(postedFields(body)).toBeUndefined();
    expect(postedFields({ ...body, [FORM_DRAWN.name]: FORM_DRAWN.value })).toEqual({ amount: '5', tags: ['a', 'b'] });
  });

  it('keeps the proposed keys that are not fields, so that a page answered as drawn is not edited', () => {
    const open: JsonObject = { type: 'object', properties: { to: { type: 'string' } } };
    const proposed = { to: 'ada@example.com', cc: ['bob@example.com'], draft_id: 7 };
    expect(valuesFromFields(open, { to: 'ada@example.com' }, proposed)).toEqual({ values: proposed, problems: [] });
    expect(valuesFromFields(open, { to: 'eve@example.com' }, proposed).values).toEqual({
      ...proposed,
      to: 'eve@example.com',
    });
  });

  it('reads an empty nullable field as null, and draws it as one that may be left empty', () => {
    const nullable: JsonObject = {
      type: 'object',
      properties: {
        name: { type: ['string', 'null'] },
        amount: { type: ['number', 'null'] },
        plan: { type: ['string', 'null'], enum: ['free', 'pro', null] },
        plain: { type: 'string' },
      },
      required: ['name', 'amount', 'plan', 'plain'],
      additionalProperties: false,
    };
    const fields = formFields(nullable);
    expect(fields.map((field) => field.nullable)).toEqual([true, true, true, false]);
    // The empty choice stands for null: null is not offered again as a choice of its own.
    expect(fields[2]?.kind).toEqual({
      kind: 'choice',
      choices: [
        { text: 'free', value: 'free', label: 'free' },
        { text: 'pro', value: 'pro', label: 'pro' },
      ],
    });
    const { values, problems } = valuesFromFields(nullable, { name: '', amount: '', plan: '', plain: '' });
    expect(problems).toEqual([]);
    expect(values).toEqual({ name: null, amount: null, plan: null });
    expect(formProblems({ schema: nullable }, values)).toEqual([{ field: 'plain', problem: 'is required' }]);
    // A proposed null is drawn empty and kept as it was.
    const proposed = { name: null, amount: 3, plan: null, plain: 'x' };
    expect(fieldText(fields[0]!, null)).toBe('');
    expect(valuesFromFields(nullable, { name: '', amount: '3', plan: '', plain: 'x' }, proposed).values).toEqual(
      proposed,
    );
  });

  it('reads fields named after Object.prototype’s members as any other, and never sets a prototype', () => {
    const named: JsonObject = {
      type: 'object',
      properties: { constructor: { type: 'string' }, toString: { type: 'number' }, valueOf: { type: 'boolean' } },
    };
    // As JSON: the test's own comparisons would call the values' `valueOf` and `constructor`.
    const read = (...args: Parameters<typeof valuesFromFields>) => JSON.stringify(valuesFromFields(...args));
    // Left out of the post: nothing inherited is read as what was posted, or proposed.
    expect(read(named, {})).toBe('{"values":{"valueOf":false},"problems":[]}');
    expect(read(named, {}, {})).toBe('{"values":{},"problems":[]}');
    expect(read(named, { constructor: 'c', toString: '2' }, { constructor: 'c' })).toBe(
      '{"values":{"constructor":"c","toString":2},"problems":[]}',
    );
    // The schema's checks read the values' own properties too.
    expect(formProblems({ schema: { ...named, required: ['toString'] } }, {})).toEqual([
      { field: 'toString', problem: 'is required' },
    ]);
    expect(formProblems({ schema: named }, {})).toEqual([]);
    // A posted `values.__proto__` is a field like any other, not the fields' prototype.
    const fields = postedFields({ [FORM_DRAWN.name]: FORM_DRAWN.value, 'values.__proto__': ['a'] });
    expect(Object.getPrototypeOf(fields)).toBe(Object.prototype);
    expect(Object.hasOwn(fields ?? {}, '__proto__')).toBe(true);
  });

  it('refuses __proto__ as a field’s name when the form is created', () => {
    const schema = JSON.parse('{"type":"object","properties":{"__proto__":{"type":"object"},"ok":{"type":"string"}}}');
    expect(formDefinitionProblems({ schema }, ['approve'])).toEqual([
      { field: 'form.schema.properties.__proto__', problem: 'is not a name a field may have' },
    ]);
  });

  it('keeps a proposed date-time whose input the browser posts without its zero seconds', () => {
    const at: JsonObject = { type: 'object', properties: { at: { type: 'string', format: 'date-time' } } };
    const proposed = { at: '2026-12-01T09:30:00+00:00' };
    expect(valuesFromFields(at, { at: '2026-12-01T09:30' }, proposed).values).toEqual(proposed);
    expect(valuesFromFields(at, { at: '2026-12-01T09:30:00.000' }, proposed).values).toEqual(proposed);
    expect(valuesFromFields(at, { at: '2026-12-01T09:31' }, proposed).values).toEqual({ at: '2026-12-01T09:31:00Z' });
  });

  it('keeps a proposed multi-line string posted back from a text area with CRLF line ends', () => {
    const text: JsonObject = { type: 'object', properties: { body: { type: 'string' } } };
    const proposed = { body: 'Hi Ada,\r\n\nYour refund\ris on its way.\n' };
    const posted = proposed.body.replace(/\r\n?|\n/g, '\r\n');
    expect(valuesFromFields(text, { body: posted }, proposed).values).toEqual(proposed);
  });
});
