import { generateText, jsonSchema, stepCountIs, tool } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { guardTool, guardTools, isEditedToolResult, isToolRefusal, type ToolRefusal } from '../../sdk/src/ai.js';
import { Pausepoint } from '../../sdk/src/index.js';
import { answerPause, PauseInbox, scriptedAiModel, toolResultsSentTo } from '../helpers/agent-models.js';
import { type Account, call, registerAccount } from '../helpers/http.js';
import { tokenOf } from '../helpers/pauses.js';
import { startTestService, type TestService } from '../helpers/service.js';

// @pausepoint/sdk/ai with the AI SDK's own mock model: a guarded tool asks a
// person through a real service, and runs only when approved; otherwise the
// model is handed a refusal as the tool's result, and the run goes on.

let service: TestService;
let dev: Account;
let client: Pausepoint;

beforeAll(async () => {
  service = await startTestService();
  dev = await registerAccount(service.url);
  client = new Pausepoint({ apiKey: dev.test, baseUrl: service.url });
});
afterAll(() => service?.destroy());

/** A refund tool that records every run. */
function refundTool() {
  const runs: { order: number; amount: number }[] = [];
  const refund = tool({
    description: 'Refund an order to the customer',
    inputSchema: z.object({ order: z.number(), amount: z.number(), note: z.string().optional() }),
    execute: async (input) => {
      runs.push(input);
      return { refunded: input.order, amount: input.amount };
    },
  });
  return { refund, runs };
}

describe('guardTool', () => {
  it('runs the tool once, with the arguments the person was shown, when approved', async () => {
    const { refund, runs } = refundTool();
    const inbox = new PauseInbox();
    const model = scriptedAiModel([
      [{ id: 'call-approve', name: 'refund', input: { order: 42, amount: 19.99, note: 'late "parcel"' } }],
      'Refunded.',
    ]);
    const running = generateText({
      model,
      prompt: 'Refund order 42',
      tools: { refund: guardTool('refund', refund, { client, onPause: inbox.add }) },
      stopWhen: stepCountIs(3),
    });
    const pause = await inbox.next();
    expect(pause).toMatchObject({
      title: 'Allow the agent to run refund?',
      options: ['approve', 'reject'],
      allow_text: true,
      timeout_default: 'reject',
      metadata: { tool: 'refund', tool_call_id: 'call-approve' },
    });
    // The arguments, plainly: indented JSON the person can read.
    expect(pause.body).toContain(
      'The agent wants to run refund (Refund an order to the customer) with these arguments:',
    );
    expect(pause.body).toContain('{\n  "order": 42,\n  "amount": 19.99,\n  "note": "late \\"parcel\\""\n}');
    expect(runs).toEqual([]);

    await answerPause(service.url, pause, 'approve');
    const result = await running;
    expect(runs).toEqual([{ order: 42, amount: 19.99, note: 'late "parcel"' }]);
    expect(toolResultsSentTo(model, 1)).toEqual({
      'call-approve': { type: 'json', value: { refunded: 42, amount: 19.99 } },
    });
    expect(result.text).toBe('Refunded.');
    expect(inbox.all).toHaveLength(1);
  });

  it('does not run the tool when rejected, and the model reads who said no and why', async () => {
    const { refund, runs } = refundTool();
    const inbox = new PauseInbox();
    const model = scriptedAiModel([[{ id: 'call-reject', name: 'refund', input: { order: 7, amount: 500 } }], 'OK.']);
    const running = generateText({
      model,
      prompt: 'Refund order 7',
      tools: { refund: guardTool('refund', refund, { client, onPause: inbox.add }) },
      stopWhen: stepCountIs(3),
    });
    const pause = await inbox.next();
    await answerPause(service.url, pause, 'reject', 'over the limit; offer a voucher.');
    const result = await running;
    expect(runs).toEqual([]);
    const seen = toolResultsSentTo(model, 1)['call-reject'] as { type: string; value: unknown };
    expect(seen.type).toBe('json');
    expect(seen.value).toEqual({
      not_run: true,
      reason: 'rejected',
      message:
        'A person did not approve refund (they chose "reject") and wrote: over the limit; offer a voucher. ' +
        'It was not run. Do not call it again with the same arguments; tell the user, or ask them what to do instead.',
      pause_id: pause.id,
      choice: 'reject',
      text: 'over the limit; offer a voucher.',
    });
    expect(result.text).toBe('OK.');
  });

  it('does not run the tool when nobody answers in time; the model is told it expired', async () => {
    const { refund, runs } = refundTool();
    const inbox = new PauseInbox();
    const model = scriptedAiModel([[{ id: 'call-late', name: 'refund', input: { order: 8, amount: 1 } }], 'Waiting.']);
    const result = await generateText({
      model,
      prompt: 'Refund order 8',
      tools: { refund: guardTool('refund', refund, { client, onPause: inbox.add, pause: { expires_in: 1 } }) },
      stopWhen: stepCountIs(3),
    });
    expect(runs).toEqual([]);
    const [pause] = inbox.all;
    expect((await client.pauses.get(pause!.id)).status).toBe('timed_out');
    expect(toolResultsSentTo(model, 1)['call-late']).toEqual({
      type: 'json',
      value: {
        not_run: true,
        reason: 'timed_out',
        message: expect.stringMatching(
          /^Nobody approved refund in time: the request for approval expired, so it was not run\./,
        ),
        pause_id: pause!.id,
        choice: null,
        text: null,
      },
    });
    expect(result.text).toBe('Waiting.');
  });

  it('gives up after timeoutMs: cancels the pause and refuses, so no request is left hanging', async () => {
    const { refund, runs } = refundTool();
    const inbox = new PauseInbox();
    const model = scriptedAiModel([[{ id: 'call-slow', name: 'refund', input: { order: 9, amount: 1 } }], 'Later.']);
    await generateText({
      model,
      prompt: 'Refund order 9',
      tools: { refund: guardTool('refund', refund, { client, onPause: inbox.add, timeoutMs: 1_500 }) },
      stopWhen: stepCountIs(3),
    });
    expect(runs).toEqual([]);
    const pause = await client.pauses.get(inbox.all[0]!.id);
    expect(pause.status).toBe('cancelled');
    expect(toolResultsSentTo(model, 1)['call-slow']).toMatchObject({
      value: { reason: 'timed_out', pause_id: pause.id },
    });
  });

  it('refuses, without running the tool or ending the run, when the question cannot be asked', async () => {
    const { refund, runs } = refundTool();
    const badKey = new Pausepoint({ apiKey: `svc_test_${'0'.repeat(48)}`, baseUrl: service.url });
    const model = scriptedAiModel([[{ id: 'call-err', name: 'refund', input: { order: 10, amount: 1 } }], 'Sorry.']);
    const result = await generateText({
      model,
      prompt: 'Refund order 10',
      tools: { refund: guardTool('refund', refund, { client: badKey }) },
      stopWhen: stepCountIs(3),
    });
    expect(runs).toEqual([]);
    const seen = toolResultsSentTo(model, 1)['call-err'] as { value: { reason: string; message: string } };
    expect(seen.value.reason).toBe('failed');
    expect(seen.value.message).toMatch(/^refund was not run: its approval could not be asked \(unauthorized: /);
    expect(seen.value.message).not.toContain(`svc_test_${'0'.repeat(48)}`);
    expect(result.text).toBe('Sorry.');
  });

  it('refuses arguments too long to show a person, without asking', async () => {
    const { refund, runs } = refundTool();
    const inbox = new PauseInbox();
    const model = scriptedAiModel([
      [{ id: 'call-long', name: 'refund', input: { order: 11, amount: 1, note: 'x'.repeat(12_000) } }],
      'Too long.',
    ]);
    await generateText({
      model,
      prompt: 'Refund order 11',
      tools: { refund: guardTool('refund', refund, { client, onPause: inbox.add }) },
      stopWhen: stepCountIs(3),
    });
    expect(runs).toEqual([]);
    expect(inbox.all).toEqual([]);
    expect(toolResultsSentTo(model, 1)['call-long']).toMatchObject({
      value: { reason: 'failed', message: expect.stringContaining('too long to show a person') },
    });
  });

  it('passes reviewers and a quorum through: the call runs once both have approved', async () => {
    const { refund, runs } = refundTool();
    const inbox = new PauseInbox();
    const model = scriptedAiModel([
      [{ id: 'call-quorum', name: 'refund', input: { order: 12, amount: 900 } }],
      'Done.',
    ]);
    const running = generateText({
      model,
      prompt: 'Refund order 12',
      tools: {
        refund: guardTool('refund', refund, {
          client,
          onPause: inbox.add,
          title: ({ input }) => `Refund ${input.amount} on order ${input.order}?`,
          context: 'Asked by the support agent for ticket 311.',
          pause: {
            expires_in: 600,
            reviewers: [{ email: 'ana@example.com', name: 'Ana' }, { email: 'bo@example.com' }],
            quorum: 2,
            metadata: { ticket: 311 },
          },
        }),
      },
      stopWhen: stepCountIs(3),
    });
    const pause = (await inbox.next()) as Awaited<ReturnType<PauseInbox['next']>> & {
      reviewers: { email: string; response_url: string }[];
      quorum: number;
    };
    expect(pause).toMatchObject({
      title: 'Refund 900 on order 12?',
      quorum: 2,
      metadata: { ticket: 311, tool: 'refund', tool_call_id: 'call-quorum' },
    });
    expect(pause.body!.startsWith('Asked by the support agent for ticket 311.\n\nThe agent wants to run refund')).toBe(
      true,
    );
    expect(pause.reviewers.map((reviewer) => reviewer.email)).toEqual(['ana@example.com', 'bo@example.com']);
    await answerPause(service.url, pause.reviewers[0]!, 'approve');
    expect(runs).toEqual([]);
    await answerPause(service.url, pause.reviewers[1]!, 'approve');
    await running;
    expect(runs).toEqual([{ order: 12, amount: 900 }]);
  });

  it('asks only when `when` says so', async () => {
    const { refund, runs } = refundTool();
    const inbox = new PauseInbox();
    const model = scriptedAiModel([[{ id: 'call-small', name: 'refund', input: { order: 13, amount: 5 } }], 'Done.']);
    await generateText({
      model,
      prompt: 'Refund order 13',
      tools: {
        refund: guardTool('refund', refund, { client, onPause: inbox.add, when: (input) => input.amount > 100 }),
      },
      stopWhen: stepCountIs(3),
    });
    expect(inbox.all).toEqual([]);
    expect(runs).toEqual([{ order: 13, amount: 5 }]);
  });

  it('stops waiting when the run is aborted, and cancels the pause', async () => {
    const { refund, runs } = refundTool();
    const inbox = new PauseInbox();
    const abort = new AbortController();
    const model = scriptedAiModel([[{ id: 'call-abort', name: 'refund', input: { order: 14, amount: 1 } }], 'Never.']);
    const running = generateText({
      model,
      prompt: 'Refund order 14',
      tools: { refund: guardTool('refund', refund, { client, onPause: inbox.add }) },
      stopWhen: stepCountIs(3),
      abortSignal: abort.signal,
    });
    const pause = await inbox.next();
    abort.abort(new Error('the user left'));
    await expect(running).rejects.toThrow();
    expect(runs).toEqual([]);
    await expect.poll(async () => (await client.pauses.get(pause.id)).status).toBe('cancelled');
  });

  it('keeps a streaming tool streaming, and its output conversion for its own results', async () => {
    const seenOutputs: unknown[] = [];
    const progress = tool({
      description: 'A long job that reports progress',
      inputSchema: z.object({ job: z.string() }),
      async *execute({ job }) {
        yield { job, done: 50 };
        yield { job, done: 100 };
      },
      toModelOutput: ({ output }) => {
        seenOutputs.push(output);
        return { type: 'text', value: `${output.job} at ${output.done}%` };
      },
    });
    const inbox = new PauseInbox();
    const model = scriptedAiModel([
      [
        { id: 'call-stream-ok', name: 'progress', input: { job: 'a' } },
        { id: 'call-stream-no', name: 'progress', input: { job: 'b' } },
      ],
      'Done.',
    ]);
    const guarded = guardTools({ progress }, { client, onPause: inbox.add });
    const running = generateText({ model, prompt: 'Run jobs', tools: guarded, stopWhen: stepCountIs(3) });
    const first = await inbox.next();
    const second = await inbox.next();
    const byCall = Object.fromEntries([first, second].map((pause) => [pause.metadata.tool_call_id, pause]));
    await answerPause(service.url, byCall['call-stream-ok']!, 'approve');
    await answerPause(service.url, byCall['call-stream-no']!, 'reject');
    await running;
    const results = toolResultsSentTo(model, 1);
    expect(results['call-stream-ok']).toEqual({ type: 'text', value: 'a at 100%' });
    expect(results['call-stream-no']).toMatchObject({ type: 'json', value: { not_run: true, reason: 'rejected' } });
    expect(seenOutputs).toEqual([{ job: 'a', done: 100 }]);
    expect(isToolRefusal((results['call-stream-no'] as { value: unknown }).value)).toBe(true);
  });

  it('checks its options when a tool is guarded, not on the first call', () => {
    const { refund } = refundTool();
    expect(() => guardTool('refund', refund, { client, approveOption: 'ok', rejectOption: 'ok' })).toThrow(
      /must differ/,
    );
    expect(() => guardTool('refund', tool({ inputSchema: z.object({}) }) as never, { client })).toThrow(
      /no execute function/,
    );
  });
});

describe('guardTool: approve with edits', () => {
  it('shows the tool’s input schema as a form with the model’s arguments, submitted by approve', async () => {
    const { refund } = refundTool();
    const inbox = new PauseInbox();
    const model = scriptedAiModel([[{ id: 'call-form', name: 'refund', input: { order: 20, amount: 5 } }], 'OK.']);
    const running = generateText({
      model,
      prompt: 'Refund order 20',
      tools: { refund: guardTool('refund', refund, { client, onPause: inbox.add, requireReason: true }) },
      stopWhen: stepCountIs(3),
    });
    const pause = await inbox.next();
    expect(pause.form).toEqual({
      schema: {
        type: 'object',
        properties: { order: { type: 'number' }, amount: { type: 'number' }, note: { type: 'string' } },
        required: ['order', 'amount'],
        additionalProperties: false,
      },
      values: { order: 20, amount: 5 },
      on: ['approve'],
    });
    expect(pause.require_text).toEqual(['reject']);
    expect(pause.body).toContain('"approve" runs it once, with the values in the form');
    await answerPause(service.url, pause, 'reject', 'wrong order');
    await running;
  });

  it('runs the tool once with the values the person approved, and the model reads what they changed', async () => {
    const { refund, runs } = refundTool();
    const inbox = new PauseInbox();
    const model = scriptedAiModel([
      [{ id: 'call-edit', name: 'refund', input: { order: 21, amount: 129.5, note: 'lost' } }],
      'Refunded 100.',
    ]);
    const running = generateText({
      model,
      prompt: 'Refund order 21',
      tools: { refund: guardTool('refund', refund, { client, onPause: inbox.add }) },
      stopWhen: stepCountIs(3),
    });
    const pause = await inbox.next();
    await answerPause(service.url, pause, 'approve', undefined, { order: 21, amount: 100 });
    const result = await running;
    expect(runs).toEqual([{ order: 21, amount: 100 }]);
    const message =
      'A person changed the arguments before approving refund: amount from 129.5 to 100; note removed. ' +
      'It ran once, with their values; its result is in `result`. Use their values from now on.';
    expect(toolResultsSentTo(model, 1)).toEqual({
      'call-edit': {
        type: 'json',
        value: {
          edited_by_human: true,
          message,
          changes: [
            { argument: 'amount', proposed: 129.5, approved: 100 },
            { argument: 'note', proposed: 'lost' },
          ],
          input: { order: 21, amount: 100 },
          result: { refunded: 21, amount: 100 },
        },
      },
    });
    const [step] = result.steps;
    expect(isEditedToolResult(step!.toolResults[0]!.output)).toBe(true);
    expect((await client.pauses.get(pause.id)).response).toMatchObject({
      values: { order: 21, amount: 100 },
      edited: true,
    });
  });

  it('approve without edits runs the model’s arguments and returns the tool’s own result', async () => {
    const { refund, runs } = refundTool();
    const inbox = new PauseInbox();
    const model = scriptedAiModel([[{ id: 'call-same', name: 'refund', input: { order: 22, amount: 3 } }], 'OK.']);
    const running = generateText({
      model,
      prompt: 'Refund order 22',
      tools: { refund: guardTool('refund', refund, { client, onPause: inbox.add }) },
      stopWhen: stepCountIs(3),
    });
    // The same values sent back, in another key order, are no edit.
    await answerPause(service.url, await inbox.next(), 'approve', undefined, { amount: 3, order: 22 });
    await running;
    expect(runs).toEqual([{ order: 22, amount: 3 }]);
    expect(toolResultsSentTo(model, 1)['call-same']).toEqual({ type: 'json', value: { refunded: 22, amount: 3 } });
  });

  it('does not run values the tool’s own schema refuses, though the form’s JSON Schema accepts them', async () => {
    const runs: unknown[] = [];
    const transfer = tool({
      inputSchema: z.object({ amount: z.number().refine((amount) => amount <= 1000, 'at most 1000') }),
      execute: async (input) => {
        runs.push(input);
        return 'sent';
      },
    });
    const inbox = new PauseInbox();
    const model = scriptedAiModel([[{ id: 'call-big', name: 'transfer', input: { amount: 10 } }], 'Not sent.']);
    const running = generateText({
      model,
      prompt: 'Send 10',
      tools: { transfer: guardTool('transfer', transfer, { client, onPause: inbox.add }) },
      stopWhen: stepCountIs(3),
    });
    const pause = await inbox.next();
    await answerPause(service.url, pause, 'approve', undefined, { amount: 5000 });
    await running;
    expect(runs).toEqual([]);
    const seen = toolResultsSentTo(model, 1)['call-big'] as { value: ToolRefusal };
    expect(seen.value).toMatchObject({ not_run: true, reason: 'invalid_values', pause_id: pause.id });
    expect(seen.value.message).toMatch(
      /^A person approved transfer with arguments its schema refuses \(.*at most 1000/s,
    );
  });

  it('asks without a form when the service refuses the tool’s schema, and runs only the arguments shown', async () => {
    const runs: unknown[] = [];
    const email = tool({
      // A lookahead, which RE2 cannot run in time linear in the text: the service refuses the schema.
      inputSchema: z.object({ to: z.string().regex(/^(?!noreply@).+@.+$/), subject: z.string() }),
      execute: async (input) => {
        runs.push(input);
        return 'sent';
      },
    });
    // Counts the creates: a schema refused once is not offered again.
    let creates = 0;
    const counting = new Pausepoint({
      apiKey: dev.test,
      baseUrl: service.url,
      fetch: (input, init) => {
        if (init?.method === 'POST' && String(input).endsWith('/v1/pause')) creates += 1;
        return fetch(input, init);
      },
    });
    const inbox = new PauseInbox();
    const input = { to: 'ada@example.com', subject: 'Hello' };
    const model = scriptedAiModel([
      [{ id: 'call-mail', name: 'email', input }],
      [{ id: 'call-mail-2', name: 'email', input: { ...input, subject: 'Again' } }],
      'Sent.',
    ]);
    const running = generateText({
      model,
      prompt: 'Mail Ada',
      tools: { email: guardTool('email', email, { client: counting, onPause: inbox.add }) },
      stopWhen: stepCountIs(4),
    });
    const pause = await inbox.next();
    expect(pause.form).toBeNull();
    expect(pause.body).toContain('"approve" runs it once, with exactly these arguments.');
    // Without a form, values cannot be sent.
    const edited = await call(service.url, 'POST', `/v1/respond/${tokenOf(pause)}`, {
      body: { choice: 'approve', values: { to: 'eve@example.com', subject: 'Hello' } },
    });
    expect(edited.status).toBe(400);
    await answerPause(service.url, pause, 'approve');
    const second = await inbox.next();
    expect(second.form).toBeNull();
    await answerPause(service.url, second, 'reject');
    await running;
    expect(runs).toEqual([input]);
    expect(inbox.all).toHaveLength(2);
    expect(creates).toBe(3);
  });

  it('a jsonSchema() tool, which has no validator of its own, runs only values the service checked against its schema', async () => {
    const runs: unknown[] = [];
    const seats = tool({
      inputSchema: jsonSchema<{ seats: number }>({
        type: 'object',
        properties: { seats: { type: 'integer', minimum: 1, maximum: 5 } },
        required: ['seats'],
      }),
      execute: async (input) => {
        runs.push(input);
        return 'booked';
      },
    });
    const inbox = new PauseInbox();
    const model = scriptedAiModel([[{ id: 'call-seats', name: 'book', input: { seats: 4 } }], 'Booked.']);
    const running = generateText({
      model,
      prompt: 'Book 4 seats',
      tools: { book: guardTool('book', seats, { client, onPause: inbox.add }) },
      stopWhen: stepCountIs(3),
    });
    const pause = await inbox.next();
    const tooMany = await call(service.url, 'POST', `/v1/respond/${tokenOf(pause)}`, {
      body: { choice: 'approve', values: { seats: 9 } },
    });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error.code).toBe('invalid_values');
    await answerPause(service.url, pause, 'approve', undefined, { seats: 2 });
    await running;
    expect(runs).toEqual([{ seats: 2 }]);
    expect(toolResultsSentTo(model, 1)['call-seats']).toMatchObject({
      value: { edited_by_human: true, changes: [{ argument: 'seats', proposed: 4, approved: 2 }], result: 'booked' },
    });
  });

  it('form: false shows the arguments as text only', async () => {
    const { refund, runs } = refundTool();
    const inbox = new PauseInbox();
    const model = scriptedAiModel([[{ id: 'call-plain', name: 'refund', input: { order: 23, amount: 1 } }], 'OK.']);
    const running = generateText({
      model,
      prompt: 'Refund order 23',
      tools: { refund: guardTool('refund', refund, { client, onPause: inbox.add, form: false }) },
      stopWhen: stepCountIs(3),
    });
    const pause = await inbox.next();
    expect(pause.form).toBeNull();
    await answerPause(service.url, pause, 'approve');
    await running;
    expect(runs).toEqual([{ order: 23, amount: 1 }]);
  });

  it('an edited streaming tool streams wrapped results, and its own conversion follows the message', async () => {
    const progress = tool({
      inputSchema: z.object({ job: z.string() }),
      async *execute({ job }) {
        yield { job, done: 50 };
        yield { job, done: 100 };
      },
      toModelOutput: ({ output }) => ({ type: 'text', value: `${output.job} at ${output.done}%` }),
    });
    const inbox = new PauseInbox();
    const model = scriptedAiModel([[{ id: 'call-job', name: 'progress', input: { job: 'a' } }], 'Done.']);
    const running = generateText({
      model,
      prompt: 'Run a job',
      tools: guardTools({ progress }, { client, onPause: inbox.add }),
      stopWhen: stepCountIs(3),
    });
    await answerPause(service.url, await inbox.next(), 'approve', undefined, { job: 'b' });
    await running;
    expect(toolResultsSentTo(model, 1)['call-job']).toEqual({
      type: 'text',
      value:
        'A person changed the arguments before approving progress: job from "a" to "b". It ran once, with their ' +
        'values; its result is in `result`. Use their values from now on.\n\nb at 100%',
    });
  });
});
