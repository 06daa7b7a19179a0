// An OpenAI Agents run whose risky tool calls wait for a person's approval.
//
//   PAUSEPOINT_API_KEY=svc_test_… npx tsx examples/openai-agents-approvals.ts
//
// Both tools declare `needsApproval`, so the run stops with interruptions
// instead of calling them. `runWithApprovals` asks about each interrupted call
// through pausepoint, one pause per call and all at once, approves or rejects
// each on the run's state, resumes the run, and repeats until the run ends.
// A rejected (or expired) call does not run; the model is told why.
//
// Each pause shows the tool's arguments as a form. A person who changes them
// (say, restarts `api-canary` rather than `api`) approves their values, not the
// model's: the run state can only approve a call as the model made it, so that
// call is rejected with a message giving their values, the model calls the
// tool again with exactly those, and that call runs without asking again.
//
// The model here is a small scripted `Model`, so the example needs no LLM and
// no network; leave `model` out (or name one, `model: 'gpt-5'`) for a real one.

import {
  Agent,
  type Model,
  type ModelRequest,
  type ModelResponse,
  setTracingDisabled,
  tool,
  Usage,
} from '@openai/agents';
import { runWithApprovals } from '@pausepoint/sdk/openai-agents';
import { z } from 'zod';

setTracingDisabled(true); // the scripted run has nothing to trace

const restartService = tool({
  name: 'restart_service',
  description: 'Restart a production service',
  parameters: z.object({ service: z.string() }),
  needsApproval: true,
  execute: async ({ service }) => `Restarted ${service}.`,
});

const dropDatabase = tool({
  name: 'drop_database',
  description: 'Drop a database and everything in it',
  parameters: z.object({ name: z.string() }),
  needsApproval: true,
  execute: async ({ name }) => `Dropped ${name}.`,
});

const agent = new Agent({
  name: 'Ops',
  instructions: 'You keep production healthy. Risky actions need a person’s approval.',
  tools: [restartService, dropDatabase],
  model: scriptedModel(),
});

// The client comes from PAUSEPOINT_API_KEY and PAUSEPOINT_BASE_URL; pass { client } to choose another.
const result = await runWithApprovals(agent, 'The API is stuck and staging is full. Fix both.', {
  pause: { expires_in: Number(process.env.APPROVAL_TIMEOUT_SECONDS ?? 600) },
  onPause: (pause, call) => console.error(`Approve or reject ${call.toolName} at: ${pause.response_url}`),
  onDecisions: (decisions) => {
    for (const { call, approved, edited, values, refusal } of decisions) {
      const verdict = approved
        ? 'approved'
        : edited
          ? `approved as ${JSON.stringify(values)}: the model is asked to call again with that`
          : `not run (${refusal?.reason})`;
      console.log(`${call.toolName}(${call.input}): ${verdict}`);
    }
  },
});
console.log(`Agent: ${result.finalOutput}`);

/**
 * The stand-in for an LLM: asks for both actions in one turn; does as it is
 * told when a person approved other arguments (calls the tool again with
 * them); then reports on what came back (each tool's output, or the refusal
 * the adapter sent).
 */
function scriptedModel(): Model {
  const respond = (output: ModelResponse['output']): ModelResponse => ({ usage: new Usage(), output });
  const textOf = (output: unknown) =>
    typeof output === 'string'
      ? output
      : typeof output === 'object' && output !== null && 'text' in output
        ? String(output.text)
        : '';
  return {
    async getResponse({ input }: ModelRequest): Promise<ModelResponse> {
      const items = typeof input === 'string' ? [] : input;
      const results = items.filter((item) => item.type === 'function_call_result');
      const calls = items.filter((item) => item.type === 'function_call');
      for (const result of results) {
        const retry = /call (\w+) again with exactly these arguments: (\{.*?\}); /.exec(textOf(result.output));
        const callId = `${result.callId}_again`;
        if (retry && !calls.some((call) => call.callId === callId)) {
          return respond([{ type: 'function_call', callId, name: retry[1]!, arguments: retry[2]! }]);
        }
      }
      if (results.length === 0) {
        return respond([
          {
            type: 'function_call',
            callId: 'call_restart',
            name: 'restart_service',
            arguments: '{"service":"api"}',
          },
          { type: 'function_call', callId: 'call_drop', name: 'drop_database', arguments: '{"name":"staging"}' },
        ]);
      }
      const report = results.map((item) => textOf(item.output)).join(' ');
      return respond([
        { type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: report }] },
      ]);
    },
    getStreamedResponse() {
      throw new Error('the scripted model does not stream');
    },
  };
}
