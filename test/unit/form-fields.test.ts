import { describe, expect, it } from 'vitest';
import { formProblems, type JsonObject } from '../../src/domain/form.js';
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
    expect(values).toEqual({ name: 'Ada', urgent: false });
  });

  it('leaves out an empty field, reads an unchecked box as false and no checked box as an empty list', () => {
    const { values, problems } = valuesFromFields(schema, { name: '', amount: '0', email: '', items: '' });
    expect(problems).toEqual([]);
    expect(values).toEqual({ amount: 0, urgent: false, tags: [] });
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
});
