import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import {
  FormValuesError,
  formOutcome,
  jsonSchemaOf,
  type Outcome,
  type Pause,
  Pausepoint,
  PausepointError,
} from '../../sdk/src/index.js';
import { type Account, call, registerAccount } from '../helpers/http.js';
import { tokenOf } from '../helpers/pauses.js';
import { startTestService, type TestService } from '../helpers/service.js';

// Forms through the SDK against a real service: a zod schema sent as JSON
// Schema and the answer parsed by it, a JSON Schema typed by a generic, and
// the service's refusals. A person answers through the respond API. The
// expectTypeOf lines are checked by tsc (npm run typecheck).

let service: TestService;
let dev: Account;
let client: Pausepoint;

beforeAll(async () => {
  service = await startTestService();
  dev = await registerAccount(service.url);
  client = new Pausepoint({ apiKey: dev.test, baseUrl: service.url });
});
afterAll(() => service?.destroy());

/** Answers the pause as the human would, once it exists. */
async function answer(pause: Pause, body: { choice: string; text?: string; values?: Record<string, unknown> }) {
  const reply = await call(service.url, 'POST', `/v1/respond/${tokenOf(pause)}`, { body });
  expect(reply.status, reply.text).toBe(200);
}

/** `onCreated` for ask(): answers the pause with `body` as soon as it exists. */
function answeredWith(body: Parameters<typeof answer>[1]) {
  let answering: Promise<void> | undefined;
  return {
    onCreated: (pause: Pause) => {
      answering = answer(pause, body);
    },
    done: () => answering,
  };
}

const Refund = z.object({
  amount: z.number().int().min(1).max(500).describe('In dollars'),
  customer: z.email(),
  reason: z.enum(['lost', 'damaged', 'late']),
  note: z.string().max(200).default(''),
});

describe('a zod form', () => {
  it('sends its JSON Schema, and types and parses the values the human sent', async () => {
    const person = answeredWith({
      choice: 'refund',
      values: { amount: 300, customer: 'ana@example.com', reason: 'damaged' },
    });
    const outcome = await client.ask(
      {
        title: 'Refund order #1234?',
        options: ['refund', 'deny'],
        form: { schema: Refund, values: { amount: 420, customer: 'ana@example.com', reason: 'lost' }, on: ['refund'] },
      },
      { onCreated: person.onCreated },
    );
    await person.done();
    expectTypeOf(outcome.values).toEqualTypeOf<{
      amount: number;
      customer: string;
      reason: 'lost' | 'damaged' | 'late';
      note: string;
    } | null>();
    expect(outcome).toMatchObject({ status: 'responded', choice: 'refund', edited: true });
    // Parsed by the schema: its default filled in.
    expect(outcome.values).toEqual({ amount: 300, customer: 'ana@example.com', reason: 'damaged', note: '' });
    expect(outcome.pause.response?.values).toEqual({ amount: 300, customer: 'ana@example.com', reason: 'damaged' });
    // What the service got: the schema's JSON Schema, without the pattern zod puts beside format: email.
    const schema = outcome.pause.form?.schema as { properties: Record<string, Record<string, unknown>> };
    expect(schema.properties.customer).toEqual({ type: 'string', format: 'email' });
    expect(schema.properties.amount).toMatchObject({ type: 'integer', minimum: 1, maximum: 500 });
    expect(schema.properties.reason).toMatchObject({ enum: ['lost', 'damaged', 'late'] });
    expect(outcome.pause.form).toMatchObject({
      values: { amount: 420, customer: 'ana@example.com', reason: 'lost' },
      on: ['refund'],
    });
  });

  it('gives the proposed values, parsed, when the human leaves them as they are', async () => {
    const person = answeredWith({ choice: 'refund' });
    const outcome = await client.ask(
      {
        title: 'Refund order #1235?',
        options: ['refund', 'deny'],
        form: { schema: Refund, values: { amount: 42, customer: 'bo@example.com', reason: 'late', note: 'ok' } },
      },
      { onCreated: person.onCreated },
    );
    await person.done();
    expect(outcome).toMatchObject({ choice: 'refund', edited: false });
    expect(outcome.values).toEqual({ amount: 42, customer: 'bo@example.com', reason: 'late', note: 'ok' });
  });

  it('gives null values, unparsed, for a choice outside `on`, with the reason required', async () => {
    const person = answeredWith({ choice: 'deny', text: 'Fraud suspected' });
    const outcome = await client.ask(
      {
        title: 'Refund order #1236?',
        options: ['refund', 'deny'],
        form: { schema: Refund, values: { amount: 42, customer: 'bo@example.com', reason: 'late' }, on: ['refund'] },
        require_text: ['deny'],
      },
      { onCreated: person.onCreated },
    );
    await person.done();
    expect(outcome).toMatchObject({ choice: 'deny', text: 'Fraud suspected', values: null, edited: false });
    expect(outcome.pause).toMatchObject({ allow_text: true, require_text: ['deny'] });
  });

  it('throws a FormValuesError, with the outcome, when the values do not pass the schema', async () => {
    // A refinement has no JSON Schema: the service accepts 7, the schema does not.
    const Even = z.object({ amount: z.number().refine((n) => n % 2 === 0, 'must be even') });
    const person = answeredWith({ choice: 'approve', values: { amount: 7 } });
    const error = await client
      .ask({ title: 'An even amount?', form: { schema: Even, values: { amount: 2 } } }, { onCreated: person.onCreated })
      .catch((e: unknown) => e);
    await person.done();
    expect(error).toBeInstanceOf(FormValuesError);
    expect(error).toBeInstanceOf(PausepointError);
    const failure = error as FormValuesError;
    expect(failure.code).toBe('invalid_form_values');
    expect(failure.fields).toEqual([{ field: 'values.amount', problem: 'must be even' }]);
    expect(failure.message).toContain('values.amount: must be even');
    expect(failure.outcome).toMatchObject({ status: 'responded', choice: 'approve', values: { amount: 7 } });
  });

  it('goes through pauses.create, waitFor and formOutcome the same way', async () => {
    const pause = await client.pauses.create({
      title: 'Refund order #1237?',
      form: { schema: Refund, values: { amount: 10, customer: 'cy@example.com', reason: 'lost' } },
    });
    expect(pause.form?.schema).toMatchObject({ type: 'object', required: ['amount', 'customer', 'reason'] });
    await answer(pause, { choice: 'approve', values: { amount: 12, customer: 'cy@example.com', reason: 'lost' } });
    const outcome = await formOutcome(await client.pauses.waitFor(pause.id), Refund);
    expectTypeOf(outcome).toEqualTypeOf<Outcome<z.output<typeof Refund>>>();
    expect(outcome).toMatchObject({ edited: true, values: { amount: 12, note: '' } });
  });
});

describe('a JSON Schema form', () => {
  const schema = {
    type: 'object',
    properties: { amount: { type: 'number', maximum: 500 }, reason: { type: 'string', maxLength: 200 } },
    required: ['amount'],
  };

  it('types the values by the generic given to ask', async () => {
    const person = answeredWith({ choice: 'approve', values: { amount: 99.5, reason: 'goodwill' } });
    const outcome = await client.ask<{ amount: number; reason?: string }>(
      { title: 'How much?', form: { schema, values: { amount: 100 } } },
      { onCreated: person.onCreated },
    );
    await person.done();
    expectTypeOf(outcome.values).toEqualTypeOf<{ amount: number; reason?: string } | null>();
    expect(outcome).toMatchObject({ values: { amount: 99.5, reason: 'goodwill' }, edited: true });
    expect(outcome.values?.amount).toBe(99.5);
  });

  it('types the values by the proposed ones, and is sent as it is', async () => {
    const person = answeredWith({ choice: 'approve' });
    const outcome = await client.ask(
      { title: 'This much?', form: { schema, values: { amount: 5 } } },
      { onCreated: person.onCreated },
    );
    await person.done();
    expectTypeOf(outcome.values).toEqualTypeOf<{ amount: number } | null>();
    expect(outcome.values).toEqual({ amount: 5 });
    expect(outcome.pause.form?.schema).toEqual(schema);
  });

  it('leaves the outcome of a pause without a form as it was, values null', async () => {
    const person = answeredWith({ choice: 'approve' });
    const outcome = await client.ask({ title: 'No form?' }, { onCreated: person.onCreated });
    await person.done();
    expectTypeOf(outcome).toEqualTypeOf<Outcome>();
    expect(outcome).toMatchObject({ choice: 'approve', values: null, edited: false });
  });
});

describe('a refused form', () => {
  it('is the service’s 400 invalid_form, its fields named', async () => {
    const error = await client
      .ask({ title: 'A list?', form: { schema: { type: 'array', items: { type: 'string' } } } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PausepointError);
    const refusal = error as PausepointError;
    expect(refusal).toMatchObject({ status: 400, code: 'invalid_form' });
    expect(refusal.fields.map((f) => f.field)).toContain('form.schema.type');
    expect(refusal.message).toContain('form.schema.type must be "object"');
  });

  it('takes a zod regex as the pattern the service checks, and names one it cannot run in linear time', async () => {
    const Ticket = z.object({ code: z.string().regex(/^[A-Z]{3}-\d+$/), title: z.string() });
    const pause = await client.pauses.create({ title: 'Ticket?', form: { schema: Ticket } });
    const wrong = await call(service.url, 'POST', `/v1/respond/${tokenOf(pause)}`, {
      body: { choice: 'approve', values: { code: 'abc-1', title: 'x' } },
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.details.fields).toEqual([{ field: 'values.code', problem: 'is not in the expected form' }]);

    const Lookahead = z.object({ code: z.string().regex(/^(?=A)[A-Z]+$/) });
    const error = await client.pauses.create({ title: 'Code?', form: { schema: Lookahead } }).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 400, code: 'invalid_form' });
    expect((error as PausepointError).fields).toEqual([
      { field: 'form.schema.properties.code', problem: expect.stringContaining('unsupported Perl syntax') },
    ]);
  });

  it('is the SDK’s own invalid_form, before any request, for a Standard Schema with no JSON Schema', async () => {
    const validateOnly = { '~standard': { version: 1, vendor: 'none', validate: (value: unknown) => ({ value }) } };
    expect(() => jsonSchemaOf(validateOnly)).toThrow(/form\.schema cannot give JSON Schema/);
    const before = await call(service.url, 'GET', '/v1/pause?limit=1', { token: dev.test });
    const error = await client.ask({ title: 'Never sent', form: { schema: validateOnly } }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'invalid_form', status: undefined });
    expect((error as PausepointError).fields).toEqual([{ field: 'form.schema', problem: expect.any(String) }]);
    const after = await call(service.url, 'GET', '/v1/pause?limit=1', { token: dev.test });
    expect(after.body.data[0]?.id).toBe(before.body.data[0]?.id);
  });

  it('is a type error when the proposed values do not fit the schema', () => {
    const typeOnly = () =>
      // @ts-expect-error: amount is a number in the schema
      client.ask({
        title: 'Typed?',
        form: { schema: Refund, values: { amount: 'lots', customer: 'a@example.com', reason: 'lost' } },
      });
    expect(typeof typeOnly).toBe('function');
  });
});
