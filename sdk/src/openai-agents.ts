// @pausepoint/sdk/openai-agents: OpenAI Agents JS runs whose tool approvals a person gives through pausepoint.
//
//   const result = await runWithApprovals(agent, 'Refund order 42', { pause: { expires_in: 600 } });
//
// Tools that need approval (`needsApproval`) stop a run with interruptions.
// Each interrupted call becomes its own pause, showing the tool's name and
// arguments; all of them are asked at once, so the people answering see them
// together and decide each call on its own (approve one refund, reject
// another). Approved calls are approved on the run's state, the others rejected
// with a message that tells the model why; then the run resumes, until it
// stops without interruptions.
import {
  type Agent,
  type AgentInputItem,
  type NonStreamRunOptions,
  type RunResult,
  type RunState,
  type RunToolApprovalItem,
  run,
} from '@openai/agents';
import {
  type ToolApprovalOptions,
  type ToolApprover,
  type ToolCallRequest,
  type ToolRefusal,
  toolApprover,
} from './tool-approval.js';

export {
  isToolRefusal,
  type ToolApprovalOptions,
  type ToolApprovalPauseFields,
  type ToolApprovalReviewer,
  type ToolCallRequest,
  type ToolRefusal,
  type ToolRefusalReason,
} from './tool-approval.js';

/** What was decided for one interrupted tool call. */
export interface InterruptionDecision {
  /** The interruption, as the run reported it. */
  item: RunToolApprovalItem;
  /** The call as it was shown to the person. */
  call: ToolCallRequest;
  approved: boolean;
  /** The pause that asked, when one was created. */
  pauseId: string | null;
  /** Why it did not run; its `message` is what the model is told. Null when approved. */
  refusal: ToolRefusal | null;
}

/** The part of a run result (or a streamed one, once it has finished) that approvals need. */
export interface InterruptedRun {
  state: {
    approve(item: RunToolApprovalItem): void;
    reject(item: RunToolApprovalItem, options?: { message?: string }): void;
  };
  interruptions: RunToolApprovalItem[];
}

export interface AnswerInterruptionsOptions extends ToolApprovalOptions {
  /** Stops waiting for the answers; the promise then rejects with the signal's reason. */
  signal?: AbortSignal | undefined;
}

/**
 * Asks about each of a run's tool-approval interruptions, one pause per call,
 * all at once, and approves or rejects each on `result.state`. Then resume the
 * run with `run(agent, result.state)`. Never rejects for a refusal, a timeout
 * or an API error: those calls are rejected on the state, with a message for the model.
 */
export async function answerInterruptions(
  result: InterruptedRun,
  options: AnswerInterruptionsOptions = {},
): Promise<InterruptionDecision[]> {
  return answerWith(toolApprover(options), result, options.signal);
}

/** What a run starts from: the user's input, or the state of a run to resume. */
export type RunInput<TContext, TAgent extends Agent<any, any>> = string | AgentInputItem[] | RunState<TContext, TAgent>;

/** Something with the `run` of a `Runner`: to use your configured runner instead of the default. */
export interface AgentRunner {
  run<TAgent extends Agent<any, any>, TContext = undefined>(
    agent: TAgent,
    input: RunInput<TContext, TAgent>,
    options?: NonStreamRunOptions<TContext, TAgent>,
  ): Promise<RunResult<TContext, TAgent>>;
}

export interface RunWithApprovalsOptions<TContext = undefined, TAgent extends Agent<any, any> = Agent<any, any>>
  extends ToolApprovalOptions {
  /** A `Runner` to run with. Default: the SDK's `run`. */
  runner?: AgentRunner | undefined;
  /** Options of each run (context, maxTurns, signal, …). Streaming is not supported here: use `answerInterruptions`. */
  runOptions?: NonStreamRunOptions<TContext, TAgent> | undefined;
  /** Called after each round of answers, before the run resumes. */
  onDecisions?: ((decisions: InterruptionDecision[]) => void) | undefined;
}

/**
 * Runs the agent; whenever it stops on tool-approval interruptions, asks a
 * person about each call through pausepoint, approves or rejects it on the run
 * state and resumes, until the run ends without interruptions. Returns that
 * last result.
 */
export async function runWithApprovals<TAgent extends Agent<any, any>, TContext = undefined>(
  agent: TAgent,
  input: RunInput<TContext, TAgent>,
  options: RunWithApprovalsOptions<TContext, TAgent> = {},
): Promise<RunResult<TContext, TAgent>> {
  const approver = toolApprover(options);
  const runOnce = (next: RunInput<TContext, TAgent>): Promise<RunResult<TContext, TAgent>> =>
    options.runner
      ? options.runner.run<TAgent, TContext>(agent, next, options.runOptions)
      : run<TAgent, TContext>(agent, next, options.runOptions);
  let result = await runOnce(input);
  while (result.interruptions.length > 0) {
    const decisions = await answerWith(approver, result, options.runOptions?.signal);
    options.onDecisions?.(decisions);
    result = await runOnce(result.state);
  }
  return result;
}

async function answerWith(
  approver: ToolApprover,
  result: InterruptedRun,
  signal: AbortSignal | undefined,
): Promise<InterruptionDecision[]> {
  const decisions = await Promise.all(
    result.interruptions.map(async (item): Promise<InterruptionDecision> => {
      const call = callOf(item);
      const decision = await approver.decide(call, signal);
      return decision.approved
        ? { item, call, approved: true, pauseId: decision.pause.id, refusal: null }
        : { item, call, approved: false, pauseId: decision.refusal.pause_id, refusal: decision.refusal };
    }),
  );
  // Decided only once every answer is in, so an abort leaves the state as it was.
  for (const decision of decisions) {
    if (decision.approved) result.state.approve(decision.item);
    else result.state.reject(decision.item, { message: decision.refusal?.message });
  }
  return decisions;
}

/** An interruption as a tool call to show: its name, its id, its arguments and the tool's description. */
function callOf(item: RunToolApprovalItem): ToolCallRequest {
  const raw = item.rawItem as Record<string, unknown>;
  const toolName = item.name ?? (typeof raw.type === 'string' ? raw.type : 'a tool');
  const toolCallId = String(raw.callId ?? raw.id ?? '');
  let input: unknown = item.arguments;
  if (input === undefined) {
    // Not a function call (a shell command, a patch, a computer action): show what it would do.
    const { providerData: _providerData, id: _id, ...shown } = raw;
    input = shown;
  }
  const tool = (item.agent?.tools as { name?: unknown; description?: unknown }[] | undefined)?.find(
    (candidate) => candidate.name === toolName,
  );
  const description = typeof tool?.description === 'string' && tool.description !== '' ? tool.description : undefined;
  return { toolName, toolCallId, input, description };
}
