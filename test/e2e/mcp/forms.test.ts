import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type Account, call, registerAccount } from '../../helpers/http.js';
import { tokenOf } from '../../helpers/pauses.js';
import { startTestService, type TestService } from '../../helpers/service.js';

// ask_human with a form over MCP (/mcp): `fields`, `required` and `values`
// make the pause's form; the human answers through the respond API with
// values, and the outcome (ask_human's and wait_for_human's) carries the
// values and whether they were edited. The same tools over stdio share this
// code (src/mcp/tools.ts).

vi.setConfig({ testTimeout: 60_000 });

let service: TestService;
let dev: Account;
let client: Client;

beforeAll(async () => {
  service = await startTestService();
  dev = await registerAccount(service.url);
  client = new Client({ name: 'pausepoint-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${service.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${dev.test}` } },
    }),
  );
});
afterAll(async () => {
  await client?.close();
  await service?.destroy();
});

interface Outcome {
  pause_id: string;
  status: string;
  choice: string | null;
  text: string | null;
  response_url: string | null;
  values: Record<string, unknown> | null;
  edited: boolean;
}

const callTool = (name: string, args: Record<string, unknown>) =>
  client.callTool({ name, arguments: args }) as Promise<CallToolResult>;
const outcomeOf = (result: CallToolResult) => {
  expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
  return result.structuredContent as unknown as Outcome;
};
const textOf = (result: CallToolResult) =>
  result.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');

async function answer(outcome: Outcome, body: Record<string, unknown>) {
  const reply = await call(service.url, 'POST', `/v1/respond/${tokenOf(outcome)}`, { body });
  expect(reply.status, reply.text).toBe(200);
}

const refundForm = {
  fields: {
    amount: { type: 'number', title: 'Amount', minimum: 0, maximum: 500 },
    reason: { type: 'string', title: 'Reason', maxLength: 200, 'x-multiline': true },
    method: {
      type: 'string',
      title: 'Refund to',
      oneOf: [
        { const: 'card', title: 'The card' },
        { const: 'voucher', title: 'A voucher' },
      ],
    },
    notify: { type: 'boolean', title: 'Email the customer' },
    tags: { type: 'array', items: { type: 'string', enum: ['late', 'damaged', 'lost'] }, uniqueItems: true },
  },
  required: ['amount', 'method'],
  values: { amount: 120, reason: 'Never arrived', method: 'card', notify: true, tags: ['lost'] },
};

describe('ask_human with fields', () => {
  it('creates the pause with the form, and the outcome carries the values the human edited', async () => {
    const asked = outcomeOf(
      await callTool('ask_human', { question: 'Refund order #4411?', ...refundForm, wait_seconds: 0 }),
    );
    expect(asked).toMatchObject({ status: 'pending', values: null, edited: false });

    const pause = (await call(service.url, 'GET', `/v1/pause/${asked.pause_id}`, { token: dev.test })).body;
    expect(pause.form).toEqual({
      schema: { type: 'object', properties: refundForm.fields, required: ['amount', 'method'] },
      values: refundForm.values,
      on: ['approve', 'reject'],
    });

    const edited = { ...refundForm.values, amount: 80, method: 'voucher' };
    await answer(asked, { choice: 'approve', values: edited });
    const waited = await callTool('wait_for_human', { pause_id: asked.pause_id, wait_seconds: 5 });
    expect(outcomeOf(waited)).toMatchObject({ status: 'responded', choice: 'approve', values: edited, edited: true });
    expect(textOf(waited)).toContain(
      `The human chose "approve". With that answer they submitted these values, changed from the ones proposed: ${JSON.stringify(edited)}.`,
    );
  });

  it('the proposed values stand when the human answers without changing them', async () => {
    const asked = outcomeOf(
      await callTool('ask_human', {
        question: 'Send this reply?',
        fields: { reply: { type: 'string', 'x-multiline': true } },
        values: { reply: 'Thanks, refunded.' },
        wait_seconds: 0,
      }),
    );
    await answer(asked, { choice: 'approve' });
    const waited = await callTool('wait_for_human', { pause_id: asked.pause_id, wait_seconds: 5 });
    expect(outcomeOf(waited)).toMatchObject({ values: { reply: 'Thanks, refunded.' }, edited: false });
    expect(textOf(waited)).toContain('they submitted these values, as proposed: {"reply":"Thanks, refunded."}.');
  });

  it('with submit_options, another option sends no values, and the sentence offers none', async () => {
    const asked = outcomeOf(
      await callTool('ask_human', {
        question: 'Refund order #4412?',
        ...refundForm,
        submit_options: ['approve'],
        allow_text: true,
        wait_seconds: 0,
      }),
    );
    const pause = (await call(service.url, 'GET', `/v1/pause/${asked.pause_id}`, { token: dev.test })).body;
    expect(pause.form.on).toEqual(['approve']);
    await answer(asked, { choice: 'reject', text: 'Not eligible.' });
    const waited = await callTool('wait_for_human', { pause_id: asked.pause_id, wait_seconds: 5 });
    expect(outcomeOf(waited)).toMatchObject({ choice: 'reject', values: null, edited: false });
    expect(textOf(waited)).toContain('The human chose "reject", and wrote "Not eligible.".');
    expect(textOf(waited)).not.toContain('submitted these values');

    const unknown = await callTool('ask_human', { question: 'Refund?', ...refundForm, submit_options: ['maybe'] });
    expect(unknown.isError).toBe(true);
    expect(textOf(unknown)).toContain('submit_options');
  });

  it('a question without fields answers values null and edited false', async () => {
    const asked = outcomeOf(await callTool('ask_human', { question: 'Deploy?', wait_seconds: 0 }));
    await answer(asked, { choice: 'approve' });
    const waited = outcomeOf(await callTool('wait_for_human', { pause_id: asked.pause_id, wait_seconds: 5 }));
    expect(waited).toMatchObject({ status: 'responded', values: null, edited: false });
  });

  it('refuses a field outside the flat kinds before asking, and names the tool’s fields in the API’s refusals', async () => {
    const unknownKeyword = await callTool('ask_human', {
      question: 'Code?',
      fields: { code: { type: 'string', pattern: '^[0-9]+$', contentMediaType: 'text/plain' } },
      values: { code: '12' },
      wait_seconds: 0,
    });
    expect(unknownKeyword.isError).toBe(true);
    expect(textOf(unknownKeyword)).toContain('Unrecognized key: "contentMediaType" at fields.code');

    const nested = await callTool('ask_human', {
      question: 'Address?',
      fields: { address: { type: 'object', properties: {} } },
      wait_seconds: 0,
    });
    expect(nested.isError).toBe(true);

    const badValues = await callTool('ask_human', {
      question: 'Refund?',
      ...refundForm,
      values: { ...refundForm.values, amount: 900 },
      wait_seconds: 0,
    });
    expect(textOf(badValues)).toBe('invalid_form: Invalid request: values.amount must be at most 500.');

    const valuesWithoutFields = await callTool('ask_human', { question: 'Refund?', values: { a: 1 }, wait_seconds: 0 });
    expect(textOf(valuesWithoutFields)).toMatch(
      /^invalid_form: Invalid request: fields must be an object naming at least one field/,
    );

    const pending = (await call(service.url, 'GET', '/v1/pause?status=pending', { token: dev.test })).body;
    expect(pending.data.map((pause: { title: string }) => pause.title)).not.toContain('Code?');
  });

  it('lists fields, required and values in ask_human’s input schema, and values and edited in its output', async () => {
    const { tools } = await client.listTools();
    const ask = tools.find((tool) => tool.name === 'ask_human')!;
    const properties = ask.inputSchema.properties as Record<string, Record<string, unknown>>;
    expect(properties.fields).toMatchObject({ type: 'object' });
    expect(JSON.stringify(properties.fields)).toContain('x-multiline');
    expect(properties.required).toMatchObject({ type: 'array' });
    expect(ask.outputSchema?.properties).toHaveProperty('values');
    expect(ask.outputSchema?.properties).toHaveProperty('edited');
  });
});
