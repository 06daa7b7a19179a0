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
//
// Approve with edits: a function tool's pause shows its parameters as a form,
// prefilled with the model's arguments. The run state can approve a call only
// as the model made it (`approve()` takes no arguments), so a call the person
// approved with changed values is rejected, with a message giving their values
// and asking the model to call the tool again with exactly those; `ApprovedEdits`
// remembers them, and the next call of that tool with those arguments (compared
// as JSON, key order aside) is approved without asking again, once. A call
// with any other arguments is asked about like any other. So the tool only
// ever runs with arguments a person approved, and the model's history shows
// the call that ran.
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
  type ArgumentChange,
  argumentsOf,
  canonicalJson,
  describeChanges,
  type ToolApprovalOptions,
  type ToolApprover,
  type ToolCallRequest,
  type ToolRefusal,
  toolApprover,
} from './tool-approval.js';

export {
  type ArgumentChange,
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
  /** Approved on the run's state: the call runs, with the model's arguments. */
  approved: boolean;
  /**
   * A person approved the tool with other arguments: the call was rejected on
   * the state, and the model asked to call again with `values`.
   */
  edited: boolean;
  /** The arguments a person approved (with `edited`, theirs); null when not approved. */
  values: Record<string, unknown> | null;
  /** With `edited`: each argument they changed. */
  changes: ArgumentChange[];
  /** The pause that asked (for a call matching earlier approved edits, that pause), when there was one. */
  pauseId: string | null;
  /** Why it did not run; its `message` is what the model is told. Null when approved or edited. */
  refusal: ToolRefusal | null;
  /** What the model is told when the call did not run (the refusal's message, or the edit's); null when approved. */
  message: string | null;
}

/**
 * The arguments people approved with edits, each waiting for the model to
 * call its tool again with them: that one call is then approved without
 * asking. `runWithApprovals` keeps one per run; pass one to every
 * `answerInterruptions` of a run you drive yourself.
 */
export class ApprovedEdits {
  readonly #waiting: { toolName: string; key: string; pauseId: string }[] = [];

  /** Remembers arguments a person approved for a tool. */
  add(toolName: string, values: Record<string, unknown>, pauseId: string): void {
    this.#waiting.push({ toolName, key: canonicalJson(values), pauseId });
  }

  /** The pause that approved exactly these arguments for this tool, forgotten once taken; undefined when none. */
  take(toolName: string, args: unknown): string | undefined {
    const values = argumentsOf(args);
    if (values === undefined) return undefined;
    const key = canonicalJson(values);
    const index = this.#waiting.findIndex((entry) => entry.toolName === toolName && entry.key === key);
    if (index < 0) return undefined;
    return this.#waiting.splice(index, 1)[0]?.pauseId;
  }
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
  /** The run's approved edits, kept between rounds: a call matching one is approved without asking. */
  edits?: ApprovedEdits | undefined;
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
  return answerWith(toolApprover(options), result, options.signal, options.edits ?? new ApprovedEdits());
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
  const edits = new ApprovedEdits();
  const runOnce = (next: RunInput<TContext, TAgent>): Promise<RunResult<TContext, TAgent>> =>
    options.runner
      ? options.runner.run<TAgent, TContext>(agent, next, options.runOptions)
      : run<TAgent, TContext>(agent, next, options.runOptions);
  let result = await runOnce(input);
  while (result.interruptions.length > 0) {
    const decisions = await answerWith(approver, result, options.runOptions?.signal, edits);
    options.onDecisions?.(decisions);
    result = await runOnce(result.state);
  }
  return result;
}

async function answerWith(
  approver: ToolApprover,
  result: InterruptedRun,
  signal: AbortSignal | undefined,
  edits: ApprovedEdits,
): Promise<InterruptionDecision[]> {
  const decisions = await Promise.all(
    result.interruptions.map(async (item): Promise<InterruptionDecision> => {
      const call = callOf(item);
      const decided = { item, call, edited: false, values: null, changes: [] };
      const approvedEarlier = edits.take(call.toolName, call.input);
      if (approvedEarlier !== undefined) {
        const values = argumentsOf(call.input) ?? null;
        return { ...decided, approved: true, values, pauseId: approvedEarlier, refusal: null, message: null };
      }
      const decision = await approver.decide(call, signal);
      if (!decision.approved) {
        const { refusal } = decision;
        return { ...decided, approved: false, pauseId: refusal.pause_id, refusal, message: refusal.message };
      }
      const values = argumentsOf(decision.values) ?? null;
      if (!decision.edited || values === null) {
        return { ...decided, approved: true, values, pauseId: decision.pause.id, refusal: null, message: null };
      }
      return {
        ...decided,
        approved: false,
        edited: true,
        values,
        changes: decision.changes,
        pauseId: decision.pause.id,
        refusal: null,
        message: editMessage(call.toolName, values, decision.changes),
      };
    }),
  );
  // Decided only once every answer is in, so an abort leaves the state as it was.
  for (const decision of decisions) {
    if (decision.approved) {
      result.state.approve(decision.item);
      continue;
    }
    if (decision.edited && decision.values && decision.pauseId) {
      edits.add(decision.call.toolName, decision.values, decision.pauseId);
    }
    result.state.reject(decision.item, { message: decision.message ?? undefined });
  }
  return decisions;
}

/** What the model is told of a call a person approved with other arguments. */
function editMessage(toolName: string, values: Record<string, unknown>, changes: ArgumentChange[]): string {
  return (
    `A person approved ${toolName} with changed arguments: ${describeChanges(changes)}. ` +
    `It was not run with yours. To run it, call ${toolName} again with exactly these arguments: ` +
    `${JSON.stringify(values)}; that call runs without asking again. Other arguments need a new approval.`
  );
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
  const tool = (
    item.agent?.tools as { type?: unknown; name?: unknown; description?: unknown; parameters?: unknown }[] | undefined
  )?.find((candidate) => candidate.name === toolName);
  const description = typeof tool?.description === 'string' && tool.description !== '' ? tool.description : undefined;
  // A function tool's parameters are its arguments' JSON Schema: the form.
  const parameters = tool?.type === 'function' && item.arguments !== undefined ? tool.parameters : undefined;
  const inputSchema =
    typeof parameters === 'object' && parameters !== null ? (parameters as Record<string, unknown>) : undefined;
  return { toolName, toolCallId, input, description, inputSchema };
}
