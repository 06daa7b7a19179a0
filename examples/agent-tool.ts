// An AI agent that asks a person before it does anything risky.
//
//   PAUSEPOINT_API_KEY=svc_test_… npx tsx examples/agent-tool.ts
//
// The agent's tools are plain functions. Those marked `risky` run only once a
// human allows that exact call: the guard shows the person the call and its
// arguments, waits for the answer, and hands the model a refusal it can act on
// when the answer is no (or nobody answers in time). The model is a stand-in
// here; in a real agent the tool calls come from your LLM's response, and the
// guard's result goes back to it as the tool result.
import { Pausepoint } from '@pausepoint/sdk';

interface ToolCall {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}

interface Tool {
  description: string;
  /** Ask a person before running it. */
  risky?: boolean;
  run(args: Record<string, unknown>): Promise<string>;
}

const users = new Map([
  [41, 'ada@example.com'],
  [42, 'grace@example.com'],
]);

const tools: Record<string, Tool> = {
  list_users: {
    description: 'List the users',
    run: async () => JSON.stringify(Object.fromEntries(users)),
  },
  delete_user: {
    description: 'Delete a user and all their data',
    risky: true,
    run: async ({ user_id }) => {
      users.delete(Number(user_id));
      return `Deleted user ${user_id} and their data.`;
    },
  },
};

const pausepoint = new Pausepoint(); // PAUSEPOINT_API_KEY and PAUSEPOINT_BASE_URL from the environment

/** Runs one tool call; a risky one only if a person allows it. The result goes back to the model. */
export async function runToolCall(call: ToolCall): Promise<string> {
  const tool = tools[call.name];
  if (!tool) return `There is no tool called ${call.name}.`;
  if (tool.risky) {
    const { status, choice, text } = await pausepoint.ask(
      {
        title: `The agent wants to ${tool.description.toLowerCase()}`,
        body: `${call.name}(${JSON.stringify(call.arguments)})`,
        options: ['allow', 'deny'],
        allow_text: true,
        expires_in: Number(process.env.APPROVAL_TIMEOUT_SECONDS ?? 600),
        timeout_default: 'deny',
        metadata: { tool_call_id: call.id, tool: call.name },
      },
      {
        // The same tool call asks once, even if this code is retried.
        idempotencyKey: `tool-call-${call.id}`,
        onCreated: (pause) => console.error(`Allow or deny ${call.name} at: ${pause.response_url}`),
      },
    );
    if (choice !== 'allow') {
      const why = status === 'timed_out' ? 'nobody answered in time' : status === 'cancelled' ? 'cancelled' : choice;
      return `A person did not allow ${call.name} (${why})${text ? `: ${text}` : ''}. Do not try it again; ask the user what to do instead.`;
    }
  }
  return tool.run(call.arguments);
}

// The stand-in for the model: the calls an LLM might make for "remove Grace's account".
const run = Date.now().toString(36);
const plan: ToolCall[] = [
  { id: `${run}-1`, name: 'list_users', arguments: {} },
  { id: `${run}-2`, name: 'delete_user', arguments: { user_id: 42, reason: 'asked to close her account' } },
];
for (const call of plan) {
  console.log(`${call.name} -> ${await runToolCall(call)}`);
}
