// @pausepoint/sdk/ai: tools of the Vercel AI SDK (`ai` 6) that ask a person first.
//
//   const tools = guardTools({ refund }, { pause: { expires_in: 600 } });
//   await generateText({ model, tools, prompt });
//
// A guarded tool's execution first creates a pause showing the tool's name and
// its arguments, and waits for the answer. Approved: the tool runs, once, with
// those arguments. Anything else (a rejection, a timeout, a cancel, an API
// error): it does not run, and the model gets a `ToolRefusal` as the tool's
// result, which says why, instead of an error that ends the run.
//
// Only types come from `ai`: guarding a tool builds a plain tool object, so this
// module loads nothing of the framework itself.
import type { Tool, ToolExecutionOptions, ToolSet } from 'ai';
import {
  isToolRefusal,
  type ToolApprovalOptions,
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

export interface GuardToolOptions<INPUT = unknown> extends ToolApprovalOptions<INPUT> {
  /**
   * Ask only when this returns true (e.g. refunds over 100); otherwise the tool
   * runs at once. Default: always ask.
   */
  when?: ((input: INPUT, options: ToolExecutionOptions) => boolean | PromiseLike<boolean>) | undefined;
}

/** A guarded tool: the same tool, whose result may be a `ToolRefusal` instead. */
export type GuardedTool<T> = T extends Tool<infer INPUT, infer OUTPUT> ? Tool<INPUT, OUTPUT | ToolRefusal> : never;

type ExecuteResult<OUTPUT> = AsyncIterable<OUTPUT> | PromiseLike<OUTPUT> | OUTPUT;

/**
 * Guards one tool: each call asks a person through pausepoint before it runs.
 * `name` is the tool's key in your `tools` (the name the model calls it by).
 * The tool's own `outputSchema` is dropped, since its result may now be a refusal.
 */
export function guardTool<INPUT, OUTPUT>(
  name: string,
  tool: Tool<INPUT, OUTPUT>,
  options: GuardToolOptions<INPUT> = {},
): Tool<INPUT, OUTPUT | ToolRefusal> {
  const execute = tool.execute as ((input: INPUT, options: ToolExecutionOptions) => ExecuteResult<OUTPUT>) | undefined;
  if (typeof execute !== 'function') {
    throw new TypeError(`guardTool(${name}): the tool has no execute function, so there is nothing to guard`);
  }
  const approver = toolApprover(options);
  const description = tool.description;

  /** Undefined when the call may run; otherwise the refusal to hand the model. */
  async function refusalFor(input: INPUT, execution: ToolExecutionOptions): Promise<ToolRefusal | undefined> {
    if (options.when && !(await options.when(input, execution))) return undefined;
    const call: ToolCallRequest<INPUT> = { toolName: name, toolCallId: execution.toolCallId, input, description };
    const decision = await approver.decide(call, execution.abortSignal);
    return decision.approved ? undefined : decision.refusal;
  }

  // A tool that streams its results (an async generator) stays one; any other stays a plain async function.
  const guardedExecute = isAsyncGeneratorFunction(execute)
    ? async function* (input: INPUT, execution: ToolExecutionOptions): AsyncGenerator<OUTPUT | ToolRefusal> {
        const refusal = await refusalFor(input, execution);
        if (refusal) {
          yield refusal;
          return;
        }
        yield* execute(input, execution) as AsyncIterable<OUTPUT>;
      }
    : async (input: INPUT, execution: ToolExecutionOptions): Promise<OUTPUT | ToolRefusal> => {
        const refusal = await refusalFor(input, execution);
        if (refusal) return refusal;
        const result = await execute(input, execution);
        return isAsyncIterable(result) ? lastOf(result) : result;
      };

  const {
    outputSchema: _outputSchema,
    toModelOutput,
    ...rest
  } = tool as Tool<INPUT, OUTPUT> & {
    outputSchema?: unknown;
  };
  const guarded: Record<string, unknown> = { ...rest, execute: guardedExecute };
  if (toModelOutput) {
    // The tool's own conversion is for its own results; a refusal goes to the model as it is.
    guarded.toModelOutput = (part: { toolCallId: string; input: INPUT; output: OUTPUT | ToolRefusal }) =>
      isToolRefusal(part.output)
        ? { type: 'json', value: { ...part.output } }
        : toModelOutput({ ...part, output: part.output as OUTPUT } as Parameters<typeof toModelOutput>[0]);
  }
  return guarded as unknown as Tool<INPUT, OUTPUT | ToolRefusal>;
}

/**
 * Guards every tool of a tool set with the same options (each asks under its
 * own name). To guard only some, guard those with `guardTool` and spread them
 * over the rest.
 */
export function guardTools<TOOLS extends ToolSet>(
  tools: TOOLS,
  options: GuardToolOptions = {},
): { [K in keyof TOOLS]: GuardedTool<TOOLS[K]> } {
  const guarded: Record<string, unknown> = {};
  for (const [name, tool] of Object.entries(tools)) {
    guarded[name] = guardTool(name, tool as Tool<unknown, unknown>, options);
  }
  return guarded as { [K in keyof TOOLS]: GuardedTool<TOOLS[K]> };
}

function isAsyncGeneratorFunction(fn: unknown): boolean {
  return Object.prototype.toString.call(fn) === '[object AsyncGeneratorFunction]';
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof value === 'object' && value !== null && Symbol.asyncIterator in value;
}

/** A stream of results from a tool that was not an async generator function: the last one is its result. */
async function lastOf<OUTPUT>(results: AsyncIterable<OUTPUT>): Promise<OUTPUT> {
  let last: OUTPUT | undefined;
  for await (const result of results) last = result;
  return last as OUTPUT;
}
