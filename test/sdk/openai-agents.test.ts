import { Agent, Runner, run, setTracingDisabled, tool } from '@openai/agents';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Pausepoint } from '../../sdk/src/index.js';
import {
  ApprovedEdits,
  answerInterruptions,
  type InterruptionDecision,
  runWithApprovals,
} from '../../sdk/src/openai-agents.js';
import { answerPause, functionResultsIn, PauseInbox, ScriptedAgentsModel } from '../helpers/agent-models.js';
import { type Account, registerAccount } from '../helpers/http.js';
import { startTestService, type TestService } from '../helpers/service.js';

// @pausepoint/sdk/openai-agents with a scripted Model: a run stopped on
// tool-approval interruptions is answered through pauses on a real service,
// one pause per call, and resumed until it ends.

setTracingDisabled(true); // no trace export: nothing leaves the machine

let service: TestService;
let dev: Account;
let client: Pausepoint;

beforeAll(async () => {
  service = await startTestService();
  dev = await registerAccount(service.url);
  client = new Pausepoint({ apiKey: dev.test, baseUrl: service.url });
});
afterAll(() => service?.destroy());

/** An agent with a refund tool that needs approval and a lookup tool that does not; both record their runs. */
function refundAgent(model: ScriptedAgentsModel) {
  const refunds: { order: number; amount: number }[] = [];
  const lookups: number[] = [];
  const refund = tool({
    name: 'refund',
    description: 'Refund an order to the customer',
    parameters: z.object({ order: z.number(), amount: z.number() }),
    needsApproval: true,
    execute: async (input) => {
      refunds.push(input);
      return `Refunded ${input.amount} on order ${input.order}.`;
    },
  });
  const lookup = tool({
    name: 'lookup',
    description: 'Look an order up',
    parameters: z.object({ order: z.number() }),
    execute: async ({ order }) => {
      lookups.push(order);
      return `Order ${order}: paid.`;
    },
  });
  const agent = new Agent({ name: 'Support', instructions: 'Help with refunds.', tools: [refund, lookup], model });
  return { agent, refunds, lookups };
}

describe('runWithApprovals', () => {
  it('asks once per call, all at once; approved calls run once with the shown arguments, the others are refused with the reason', async () => {
    const model = new ScriptedAgentsModel([
      [
        { id: 'call_a', name: 'refund', input: { order: 1, amount: 10 } },
        { id: 'call_b', name: 'refund', input: { order: 2, amount: 990 } },
        { id: 'call_c', name: 'lookup', input: { order: 3 } },
      ],
      [{ id: 'call_d', name: 'refund', input: { order: 4, amount: 20 } }],
      'Refunded orders 1 and 4; order 2 needs a manager.',
    ]);
    const { agent, refunds, lookups } = refundAgent(model);
    const inbox = new PauseInbox();
    const rounds: InterruptionDecision[][] = [];
    const running = runWithApprovals(agent, 'Refund my orders', {
      client,
      onPause: inbox.add,
      onDecisions: (decisions) => rounds.push(decisions),
    });

    // Both calls of the first turn are asked before either is answered.
    const first = await inbox.next();
    const second = await inbox.next();
    const byCall = Object.fromEntries([first, second].map((pause) => [pause.metadata.tool_call_id, pause]));
    expect(byCall.call_a).toMatchObject({
      title: 'Allow the agent to run refund?',
      options: ['approve', 'reject'],
      timeout_default: 'reject',
      metadata: { tool: 'refund', tool_call_id: 'call_a' },
    });
    expect(byCall.call_a!.body).toContain(
      'The agent wants to run refund (Refund an order to the customer) with these arguments:\n\n{\n  "order": 1,\n  "amount": 10\n}',
    );
    expect(byCall.call_b!.body).toContain('{\n  "order": 2,\n  "amount": 990\n}');
    expect(refunds).toEqual([]);
    await answerPause(service.url, byCall.call_b!, 'reject', 'too much, ask a manager!');
    await answerPause(service.url, byCall.call_a!, 'approve');

    // The second turn's call is a new round.
    const third = await inbox.next();
    expect(third.metadata).toMatchObject({ tool_call_id: 'call_d' });
    await answerPause(service.url, third, 'approve');

    const result = await running;
    expect(result.interruptions).toEqual([]);
    expect(result.finalOutput).toBe('Refunded orders 1 and 4; order 2 needs a manager.');
    expect(refunds).toEqual([
      { order: 1, amount: 10 },
      { order: 4, amount: 20 },
    ]);
    expect(lookups).toEqual([3]);
    expect(inbox.all).toHaveLength(3);

    // What the model was sent after the first round: the approved call's result, and the refusal for the other.
    const afterFirst = functionResultsIn(model.requests[1]);
    expect(afterFirst.call_a).toEqual({ type: 'text', text: 'Refunded 10 on order 1.' });
    expect(afterFirst.call_b).toEqual({
      type: 'text',
      text:
        'A person did not approve refund (they chose "reject") and wrote: too much, ask a manager! It was not run. ' +
        'Do not call it again with the same arguments; tell the user, or ask them what to do instead.',
    });
    expect(afterFirst.call_c).toEqual({ type: 'text', text: 'Order 3: paid.' });
    expect(functionResultsIn(model.requests[2]).call_d).toEqual({ type: 'text', text: 'Refunded 20 on order 4.' });

    expect(rounds.map((round) => round.map((decision) => [decision.call.toolCallId, decision.approved]))).toEqual([
      [
        ['call_a', true],
        ['call_b', false],
      ],
      [['call_d', true]],
    ]);
    expect(rounds[0]![1]!.refusal).toMatchObject({ reason: 'rejected', pause_id: byCall.call_b!.id });
  });

  it('refuses a call nobody answers in time, and the run goes on', async () => {
    const model = new ScriptedAgentsModel([
      [{ id: 'call_late', name: 'refund', input: { order: 5, amount: 1 } }],
      'It needs approval first.',
    ]);
    const { agent, refunds } = refundAgent(model);
    const inbox = new PauseInbox();
    const result = await runWithApprovals(agent, 'Refund order 5', {
      client,
      onPause: inbox.add,
      pause: { expires_in: 1 },
      runner: new Runner({ tracingDisabled: true }),
    });
    expect(refunds).toEqual([]);
    expect(result.finalOutput).toBe('It needs approval first.');
    expect((await client.pauses.get(inbox.all[0]!.id)).status).toBe('timed_out');
    expect(functionResultsIn(model.requests[1]).call_late).toEqual({
      type: 'text',
      text: expect.stringMatching(
        /^Nobody approved refund in time: the request for approval expired, so it was not run\./,
      ),
    });
  });

  it('refuses every call when the question cannot be asked, without ending the run', async () => {
    const model = new ScriptedAgentsModel([
      [{ id: 'call_err', name: 'refund', input: { order: 6, amount: 1 } }],
      'Could not ask.',
    ]);
    const { agent, refunds } = refundAgent(model);
    const badKey = new Pausepoint({ apiKey: `svc_test_${'0'.repeat(48)}`, baseUrl: service.url });
    const result = await runWithApprovals(agent, 'Refund order 6', { client: badKey });
    expect(refunds).toEqual([]);
    expect(result.finalOutput).toBe('Could not ask.');
    expect(functionResultsIn(model.requests[1]).call_err).toEqual({
      type: 'text',
      text: expect.stringMatching(/^refund was not run: its approval could not be asked \(unauthorized: /),
    });
  });
});

describe('answerInterruptions', () => {
  it('answers the interruptions of a run you drive yourself, then you resume it', async () => {
    const model = new ScriptedAgentsModel([
      [{ id: 'call_manual', name: 'refund', input: { order: 7, amount: 70 } }],
      'Done.',
    ]);
    const { agent, refunds } = refundAgent(model);
    const inbox = new PauseInbox();
    let result = await run(agent, 'Refund order 7');
    expect(result.interruptions).toHaveLength(1);
    const answering = answerInterruptions(result, { client, onPause: inbox.add, approveOption: 'refund it' });
    const pause = await inbox.next();
    expect(pause.options).toEqual(['refund it', 'reject']);
    await answerPause(service.url, pause, 'refund it');
    const [decision] = await answering;
    expect(decision).toMatchObject({ approved: true, pauseId: pause.id, refusal: null });
    expect(refunds).toEqual([]);
    result = await run(agent, result.state);
    expect(result.finalOutput).toBe('Done.');
    expect(refunds).toEqual([{ order: 7, amount: 70 }]);
  });
});

describe('approve with edits', () => {
  it('shows the tool’s parameters as a form; an edited approval makes the model call again with the person’s values, which then run once without asking', async () => {
    const model = new ScriptedAgentsModel([
      [{ id: 'call_big', name: 'refund', input: { order: 5, amount: 990 } }],
      // The model follows the message and calls again with the approved values (keys in another order).
      [{ id: 'call_again', name: 'refund', input: { amount: 100, order: 5 } }],
      'Refunded 100 on order 5.',
    ]);
    const { agent, refunds } = refundAgent(model);
    const inbox = new PauseInbox();
    const rounds: InterruptionDecision[][] = [];
    const running = runWithApprovals(agent, 'Refund order 5', {
      client,
      onPause: inbox.add,
      onDecisions: (decisions) => rounds.push(decisions),
    });
    const pause = await inbox.next();
    expect(pause.form).toEqual({
      schema: {
        type: 'object',
        properties: { order: { type: 'number' }, amount: { type: 'number' } },
        required: ['order', 'amount'],
        additionalProperties: false,
      },
      values: { order: 5, amount: 990 },
      on: ['approve'],
    });
    await answerPause(service.url, pause, 'approve', undefined, { order: 5, amount: 100 });

    const result = await running;
    expect(result.finalOutput).toBe('Refunded 100 on order 5.');
    expect(refunds).toEqual([{ order: 5, amount: 100 }]);
    expect(inbox.all).toHaveLength(1);
    expect(functionResultsIn(model.requests[1]).call_big).toEqual({
      type: 'text',
      text:
        'A person approved refund with changed arguments: amount from 990 to 100. It was not run with yours. ' +
        'To run it, call refund again with exactly these arguments: {"order":5,"amount":100}; that call runs ' +
        'without asking again. Other arguments need a new approval.',
    });
    expect(functionResultsIn(model.requests[2]).call_again).toEqual({ type: 'text', text: 'Refunded 100 on order 5.' });
    expect(
      rounds.map((round) => round.map(({ approved, edited, pauseId }) => ({ approved, edited, pauseId }))),
    ).toEqual([
      [{ approved: false, edited: true, pauseId: pause.id }],
      [{ approved: true, edited: false, pauseId: pause.id }],
    ]);
    expect(rounds[0]![0]!.changes).toEqual([{ argument: 'amount', proposed: 990, approved: 100 }]);
  });

  it('a call with other arguments than the approved ones is asked about again; the edit is good for one call only', async () => {
    const model = new ScriptedAgentsModel([
      [{ id: 'call_1', name: 'refund', input: { order: 6, amount: 50 } }],
      [{ id: 'call_2', name: 'refund', input: { order: 6, amount: 45 } }],
      'Stopped.',
    ]);
    const { agent, refunds } = refundAgent(model);
    const inbox = new PauseInbox();
    const running = runWithApprovals(agent, 'Refund order 6', { client, onPause: inbox.add });
    await answerPause(service.url, await inbox.next(), 'approve', undefined, { order: 6, amount: 40 });
    const again = await inbox.next();
    expect(again.form?.values).toEqual({ order: 6, amount: 45 });
    await answerPause(service.url, again, 'reject', 'I said 40');
    await running;
    expect(refunds).toEqual([]);
    expect(inbox.all).toHaveLength(2);
  });

  it('answerInterruptions keeps the edits in the ApprovedEdits it is given, across the rounds of a run you drive', async () => {
    const model = new ScriptedAgentsModel([
      [{ id: 'call_x', name: 'refund', input: { order: 7, amount: 70 } }],
      [{ id: 'call_y', name: 'refund', input: { order: 7, amount: 7 } }],
      'Done.',
    ]);
    const { agent, refunds } = refundAgent(model);
    const inbox = new PauseInbox();
    const edits = new ApprovedEdits();
    let result = await run(agent, 'Refund order 7');
    const answering = answerInterruptions(result, { client, onPause: inbox.add, edits });
    await answerPause(service.url, await inbox.next(), 'approve', undefined, { order: 7, amount: 7 });
    expect((await answering).map((decision) => decision.edited)).toEqual([true]);
    result = await run(agent, result.state);
    expect(result.interruptions).toHaveLength(1);
    expect(await answerInterruptions(result, { client, onPause: inbox.add, edits })).toMatchObject([
      { approved: true, values: { order: 7, amount: 7 } },
    ]);
    result = await run(agent, result.state);
    expect(result.finalOutput).toBe('Done.');
    expect(refunds).toEqual([{ order: 7, amount: 7 }]);
    expect(inbox.all).toHaveLength(1);
  });

  it('form: false asks about the arguments as text; approving runs them as the model made them', async () => {
    const model = new ScriptedAgentsModel([[{ id: 'call_p', name: 'refund', input: { order: 8, amount: 8 } }], 'OK.']);
    const { agent, refunds } = refundAgent(model);
    const inbox = new PauseInbox();
    const running = runWithApprovals(agent, 'Refund order 8', { client, onPause: inbox.add, form: false });
    const pause = await inbox.next();
    expect(pause.form).toBeNull();
    await answerPause(service.url, pause, 'approve');
    await running;
    expect(refunds).toEqual([{ order: 8, amount: 8 }]);
  });
});
