// @pausepoint/sdk/ai: tools of the Vercel AI SDK (`ai` 6) that ask a person first.
//
//   const tools = guardTools({ refund }, { pause: { expires_in: 600 } });
//   await generateText({ model, tools, prompt });
//
// A guarded tool's execution first creates a pause showing the tool's name and
// its arguments, and waits for the answer. The pause's form is the tool's
// input schema, prefilled with the model's arguments, so the person may change
// them. Approved: the tool runs, once, with the values the person approved,
// checked again by the tool's own schema; when they changed any, the tool's
// result comes wrapped in an `EditedToolResult` that tells the model which.
// Anything else (a rejection, a timeout, a cancel, an API error): it does not
// run, and the model gets a `ToolRefusal` as the tool's result, which says
// why, instead of an error that ends the run.
//
// Guarding a tool builds a plain tool object, so loading this module loads
// nothing of the framework; the first guarded call imports `ai` to turn the
// tool's schema into JSON Schema (`asSchema`).
import type { FlexibleSchema, Tool, ToolExecutionOptions, ToolSet } from 'ai';
import {
  type ArgumentChange,
  describeChanges,
  isToolRefusal,
  type ToolApprovalOptions,
  type ToolCallRequest,
  type ToolRefusal,
  toolApprover,
  toolRefusal,
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

export interface GuardToolOptions<INPUT = unknown> extends ToolApprovalOptions<INPUT> {
  /**
   * Ask only when this returns true (e.g. refunds over 100); otherwise the tool
   * runs at once. Default: always ask.
   */
  when?: ((input: INPUT, options: ToolExecutionOptions) => boolean | PromiseLike<boolean>) | undefined;
}

/**
 * The result of a call a person approved after changing its arguments: the
 * tool ran once, with `input`, and returned `result`. The model receives it
 * as it is (or, when the tool converts its output for the model, the
 * conversion of `result` after `message`).
 */
export interface EditedToolResult<INPUT = unknown, OUTPUT = unknown> {
  /** Always true: a person changed the arguments before approving. */
  edited_by_human: true;
  /** A sentence for the model: which arguments changed, and that the tool ran with the person's values. */
  message: string;
  /** Each argument changed, with its value as proposed and as approved. */
  changes: ArgumentChange[];
  /** The arguments the tool ran with. */
  input: INPUT;
  /** What the tool returned. */
  result: OUTPUT;
}

/** True for an `EditedToolResult`: the output of a guarded call a person approved with changes. */
export function isEditedToolResult(value: unknown): value is EditedToolResult {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Partial<EditedToolResult>;
  return candidate.edited_by_human === true && Array.isArray(candidate.changes) && 'result' in candidate;
}

/** What a guarded call may return: the tool's own result, the same after a person's edits, or a refusal. */
export type GuardedOutput<INPUT, OUTPUT> = OUTPUT | EditedToolResult<INPUT, OUTPUT> | ToolRefusal;

/** A guarded tool: the same tool, whose result may be an `EditedToolResult` or a `ToolRefusal` instead. */
export type GuardedTool<T> =
  T extends Tool<infer INPUT, infer OUTPUT> ? Tool<INPUT, GuardedOutput<INPUT, OUTPUT>> : never;

type ExecuteResult<OUTPUT> = AsyncIterable<OUTPUT> | PromiseLike<OUTPUT> | OUTPUT;

/**
 * Guards one tool: each call asks a person through pausepoint before it runs.
 * `name` is the tool's key in your `tools` (the name the model calls it by).
 * The tool's own `outputSchema` is dropped, since its result may now be a
 * refusal or an edited result.
 */
export function guardTool<INPUT, OUTPUT>(
  name: string,
  tool: Tool<INPUT, OUTPUT>,
  options: GuardToolOptions<INPUT> = {},
): Tool<INPUT, GuardedOutput<INPUT, OUTPUT>> {
  const execute = tool.execute as ((input: INPUT, options: ToolExecutionOptions) => ExecuteResult<OUTPUT>) | undefined;
  if (typeof execute !== 'function') {
    throw new TypeError(`guardTool(${name}): the tool has no execute function, so there is nothing to guard`);
  }
  const approver = toolApprover(options);
  const description = tool.description;
  const schema = options.form === false ? undefined : lazySchema(tool.inputSchema as FlexibleSchema<INPUT>);

  /** The arguments to run with (and what a person changed), or the refusal to hand the model. */
  async function decide(input: INPUT, execution: ToolExecutionOptions): Promise<Verdict<INPUT>> {
    if (options.when && !(await options.when(input, execution))) return { run: input, changes: [] };
    const inputSchema = await schema?.json();
    const call: ToolCallRequest<INPUT> = {
      toolName: name,
      toolCallId: execution.toolCallId,
      input,
      description,
      inputSchema,
    };
    const decision = await approver.decide(call, execution.abortSignal);
    if (!decision.approved) return { refusal: decision.refusal };
    if (!decision.edited) return { run: input, changes: [] };
    // The service checked the values against the JSON Schema; the tool's own schema may say more.
    const checked = await schema?.validate(decision.values);
    if (checked && !checked.success) {
      return { refusal: toolRefusal(name, 'invalid_values', { pause_id: decision.pause.id }, checked.error) };
    }
    return { run: (checked ? checked.value : decision.values) as INPUT, changes: decision.changes };
  }

  const wrap = (output: OUTPUT, input: INPUT, changes: ArgumentChange[]): GuardedOutput<INPUT, OUTPUT> =>
    changes.length === 0 ? output : editedResult(name, input, changes, output);

  // A tool that streams its results (an async generator) stays one; any other stays a plain async function.
  const guardedExecute = isAsyncGeneratorFunction(execute)
    ? async function* (input: INPUT, execution: ToolExecutionOptions): AsyncGenerator<GuardedOutput<INPUT, OUTPUT>> {
        const verdict = await decide(input, execution);
        if ('refusal' in verdict) {
          yield verdict.refusal;
          return;
        }
        for await (const output of execute(verdict.run, execution) as AsyncIterable<OUTPUT>) {
          yield wrap(output, verdict.run, verdict.changes);
        }
      }
    : async (input: INPUT, execution: ToolExecutionOptions): Promise<GuardedOutput<INPUT, OUTPUT>> => {
        const verdict = await decide(input, execution);
        if ('refusal' in verdict) return verdict.refusal;
        const result = await execute(verdict.run, execution);
        return wrap(isAsyncIterable(result) ? await lastOf(result) : result, verdict.run, verdict.changes);
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
    type Part = Parameters<typeof toModelOutput>[0];
    type ModelOutput = Awaited<ReturnType<typeof toModelOutput>>;
    // The tool's own conversion is for its own results; a refusal goes to the model as it is,
    // and an edited result as the conversion of its result after the message.
    guarded.toModelOutput = async (part: {
      toolCallId: string;
      input: INPUT;
      output: GuardedOutput<INPUT, OUTPUT>;
    }) => {
      const { output } = part;
      if (isToolRefusal(output)) return { type: 'json', value: { ...output } };
      if (!isEditedToolResult(output)) return toModelOutput({ ...part, output } as Part);
      const converted: ModelOutput = await toModelOutput({
        ...part,
        input: output.input,
        output: output.result,
      } as Part);
      return withMessage(converted, output);
    };
  }
  return guarded as unknown as Tool<INPUT, GuardedOutput<INPUT, OUTPUT>>;
}

type Verdict<INPUT> = { run: INPUT; changes: ArgumentChange[] } | { refusal: ToolRefusal };

function editedResult<INPUT, OUTPUT>(
  name: string,
  input: INPUT,
  changes: ArgumentChange[],
  result: OUTPUT,
): EditedToolResult<INPUT, OUTPUT> {
  const message =
    `A person changed the arguments before approving ${name}: ${describeChanges(changes)}. ` +
    'It ran once, with their values; its result is in `result`. Use their values from now on.';
  return { edited_by_human: true, message, changes, input, result };
}

/** A tool's own conversion of its result for the model, with an edited result's message first. */
function withMessage<T>(converted: T, edited: EditedToolResult): T {
  const output = converted as { type: string; value?: unknown };
  switch (output.type) {
    case 'text':
      return { ...output, value: `${edited.message}\n\n${output.value}` } as T;
    case 'json':
      return { ...output, value: { ...edited, result: output.value } } as T;
    case 'content':
      return { ...output, value: [{ type: 'text', text: edited.message }, ...(output.value as unknown[])] } as T;
    default:
      return converted;
  }
}

type AiSchema = ReturnType<typeof import('ai').asSchema>;

/**
 * The tool's input schema as JSON Schema and its validator, made by `ai`'s
 * `asSchema` on first use. A schema that has no JSON Schema (some Standard
 * Schema libraries) gives no form: the arguments are shown as text.
 */
function lazySchema<INPUT>(inputSchema: FlexibleSchema<INPUT> | undefined) {
  let loaded: Promise<{ json: Record<string, unknown> | undefined; schema: AiSchema | undefined }> | undefined;
  const ready = () => {
    loaded ??= (async () => {
      let schema: AiSchema | undefined;
      try {
        const { asSchema } = await import('ai');
        schema = asSchema(inputSchema);
        return { json: (await schema.jsonSchema) as Record<string, unknown>, schema };
      } catch {
        return { json: undefined, schema };
      }
    })();
    return loaded;
  };
  return {
    json: async () => (await ready()).json,
    async validate(value: unknown): Promise<{ success: true; value: unknown } | { success: false; error: string }> {
      const { schema } = await ready();
      if (!schema?.validate) return { success: true, value };
      const result = await schema.validate(value);
      return result.success ? result : { success: false, error: messageOf(result.error) };
    },
  };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
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
