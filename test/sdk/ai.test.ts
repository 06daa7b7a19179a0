import { generateText, stepCountIs, tool } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { guardTool, guardTools, isToolRefusal } from '../../sdk/src/ai.js';
import { Pausepoint } from '../../sdk/src/index.js';
import { answerPause, PauseInbox, scriptedAiModel, toolResultsSentTo } from '../helpers/agent-models.js';
import { type Account, registerAccount } from '../helpers/http.js';
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
