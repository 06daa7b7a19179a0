// Asking a person whether an AI agent may run one tool call: what the adapters
// for the agent frameworks (./ai.ts, ./openai-agents.ts) share. It knows no
// framework: it turns a tool call into a pause, waits with the client's `ask`,
// and turns the outcome into "run it" or a refusal the model can read.
import { Pausepoint } from './client.js';
import { PausepointError, WaitTimeoutError } from './errors.js';
import type { CreatePauseParams, Pause } from './types.js';

/** The service's limits on a pause's title and body (characters). */
const MAX_TITLE = 200;
const MAX_BODY = 10_000;

/** A reviewer of the pause: emailed a personal link; their votes decide (see `quorum`). */
export interface ToolApprovalReviewer {
  email: string;
  name?: string | undefined;
}

/**
 * Fields of the pause passed through as they are (`POST /v1/pause`): its expiry
 * (`expires_in` seconds or `expires_at`), who is told (`notify`), `metadata`,
 * and `reviewers` with a `quorum`. The title, body, options and timeout default
 * are the adapter's.
 */
export type ToolApprovalPauseFields = Omit<
  CreatePauseParams,
  'title' | 'body' | 'options' | 'allow_text' | 'timeout_default' | 'metadata'
> & {
  metadata?: Record<string, unknown> | undefined;
};

/** One tool call an agent wants to make. */
export interface ToolCallRequest<INPUT = unknown> {
  /** The tool's name, as the model calls it. */
  toolName: string;
  /** The framework's id of this call. */
  toolCallId: string;
  /** The arguments, as the tool will receive them. */
  input: INPUT;
  /** What the tool does, when the framework knows. */
  description?: string | undefined;
}

export interface ToolApprovalOptions<INPUT = unknown> {
  /** The client that asks. Default: `new Pausepoint()` (`PAUSEPOINT_API_KEY`, `PAUSEPOINT_BASE_URL`). */
  client?: Pausepoint | undefined;
  /** The question's title. Default: `Allow the agent to run <tool>?` */
  title?: string | ((call: ToolCallRequest<INPUT>) => string) | undefined;
  /** Text shown above the arguments, e.g. who the agent works for. The arguments are always shown. */
  context?: string | ((call: ToolCallRequest<INPUT>) => string) | undefined;
  /** The option that lets the call run. Default `approve`. */
  approveOption?: string | undefined;
  /** The option that refuses it; also the outcome when nobody answers in time. Default `reject`. */
  rejectOption?: string | undefined;
  /** Let the person write a reason, which the model is told. Default true. */
  allowText?: boolean | undefined;
  /** The pause's expiry, reviewers and quorum, notify and metadata, passed through. */
  pause?: ToolApprovalPauseFields | undefined;
  /** Stop waiting after this many ms, cancel the pause and refuse the call. Default: until the pause expires. */
  timeoutMs?: number | undefined;
  /** Called once the pause exists, e.g. to print its `response_url` or log its id. */
  onPause?: ((pause: Pause, call: ToolCallRequest<INPUT>) => void) | undefined;
}

/** Why a tool call did not run. */
export type ToolRefusalReason = 'rejected' | 'timed_out' | 'cancelled' | 'failed';

/** What the model is handed instead of the tool's result when the call did not run. */
export interface ToolRefusal {
  /** Always true: the tool was not run. */
  not_run: true;
  /** `rejected` (a person said no), `timed_out`, `cancelled`, or `failed` (the question could not be asked). */
  reason: ToolRefusalReason;
  /** A sentence for the model: what happened and what to do next. */
  message: string;
  /** The pause that asked, when there was one. */
  pause_id: string | null;
  /** The option chosen, when a person chose one. */
  choice: string | null;
  /** What the person wrote, if anything. */
  text: string | null;
}

export type ToolApprovalDecision = { approved: true; pause: Pause } | { approved: false; refusal: ToolRefusal };

/** True for a `ToolRefusal`: the output of a guarded call that did not run. */
export function isToolRefusal(value: unknown): value is ToolRefusal {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Partial<ToolRefusal>;
  return candidate.not_run === true && typeof candidate.reason === 'string' && typeof candidate.message === 'string';
}

/** The checked, resolved form of ToolApprovalOptions that the adapters keep. */
export interface ToolApprover<INPUT = unknown> {
  /** Asks about one call and waits. Never rejects, except with the signal's reason when it aborts. */
  decide(call: ToolCallRequest<INPUT>, signal?: AbortSignal): Promise<ToolApprovalDecision>;
}

/** Checks the options once, when a tool is guarded, so a mistake shows at start and not on the first call. */
export function toolApprover<INPUT>(options: ToolApprovalOptions<INPUT> = {}): ToolApprover<INPUT> {
  const approve = options.approveOption ?? 'approve';
  const reject = options.rejectOption ?? 'reject';
  for (const [name, value] of [
    ['approveOption', approve],
    ['rejectOption', reject],
  ] as const) {
    if (typeof value !== 'string' || value.length === 0 || value.length > 100) {
      throw new TypeError(`${name}: 1 to 100 characters`);
    }
  }
  if (approve === reject) throw new TypeError('approveOption and rejectOption must differ');
  const client = options.client ?? new Pausepoint();
  const allowText = options.allowText ?? true;

  return {
    async decide(call, signal) {
      const refuse = (reason: ToolRefusalReason, fields: Partial<ToolRefusal> = {}, why = ''): ToolApprovalDecision => {
        const refusal: ToolRefusal = { not_run: true, reason, message: '', pause_id: null, choice: null, text: null };
        Object.assign(refusal, fields);
        refusal.message = refusalMessage(call.toolName, refusal, why);
        return { approved: false, refusal };
      };
      let params: CreatePauseParams;
      try {
        params = pauseParams(call, options, approve, reject, allowText);
      } catch (error) {
        return refuse('failed', {}, messageOf(error));
      }
      try {
        const outcome = await client.ask(params, {
          signal,
          timeoutMs: options.timeoutMs,
          onCreated: options.onPause && ((pause) => options.onPause?.(pause, call)),
        });
        const answered = { pause_id: outcome.pause.id, choice: outcome.choice, text: outcome.text };
        if (outcome.status === 'responded' && outcome.choice === approve)
          return { approved: true, pause: outcome.pause };
        if (outcome.status === 'responded') return refuse('rejected', answered);
        if (outcome.status === 'timed_out') return refuse('timed_out', { ...answered, choice: null });
        return refuse('cancelled', { pause_id: outcome.pause.id });
      } catch (error) {
        // The run itself was stopped: that is the caller's decision, not a refusal.
        if (signal?.aborted) throw signal.reason ?? error;
        if (error instanceof WaitTimeoutError) return refuse('timed_out', { pause_id: error.pause?.id ?? null });
        return refuse('failed', {}, messageOf(error));
      }
    },
  };
}

/** The pause that asks about one call: the tool's name in the title, its arguments in the body as indented JSON. */
function pauseParams<INPUT>(
  call: ToolCallRequest<INPUT>,
  options: ToolApprovalOptions<INPUT>,
  approve: string,
  reject: string,
  allowText: boolean,
): CreatePauseParams {
  const title = truncate(
    typeof options.title === 'function'
      ? options.title(call)
      : (options.title ?? `Allow the agent to run ${call.toolName}?`),
    MAX_TITLE,
  );
  const context = typeof options.context === 'function' ? options.context(call) : options.context;
  const what = call.description ? `${call.toolName} (${oneLine(call.description)})` : call.toolName;
  const body = [
    ...(context ? [context, ''] : []),
    `The agent wants to run ${what} with these arguments:`,
    '',
    showArguments(call.input),
    '',
    `"${approve}" runs it once, with exactly these arguments. "${reject}" refuses it` +
      (allowText ? '; a reason you write is passed on to the agent.' : '.'),
  ].join('\n');
  // The person must see every argument they approve: a body cut short could hide one.
  if (body.length > MAX_BODY) {
    throw new TypeError(
      `its arguments are too long to show a person (${body.length} characters with the text around them, ${MAX_BODY} at most)`,
    );
  }
  const { metadata, ...fields } = options.pause ?? {};
  return {
    ...fields,
    title,
    body,
    options: [approve, reject],
    allow_text: allowText,
    timeout_default: reject,
    metadata: { ...metadata, tool: call.toolName, tool_call_id: call.toolCallId },
  };
}

/** Arguments as the person reads them: indented JSON (a string that is JSON is shown parsed). */
function showArguments(input: unknown): string {
  let value = input;
  if (typeof input === 'string') {
    try {
      value = JSON.parse(input);
    } catch {
      return input;
    }
  }
  const json = JSON.stringify(value, null, 2);
  if (json === undefined) throw new TypeError('its arguments cannot be shown as JSON');
  return json;
}

function refusalMessage(toolName: string, refusal: ToolRefusal, why: string): string {
  switch (refusal.reason) {
    case 'rejected':
      return (
        `A person did not approve ${toolName} (they chose "${refusal.choice}")` +
        (refusal.text ? ` and wrote: ${asSentence(refusal.text)}` : '.') +
        ' It was not run. Do not call it again with the same arguments; tell the user, or ask them what to do instead.'
      );
    case 'timed_out':
      return `Nobody approved ${toolName} in time: the request for approval expired, so it was not run. Tell the user it needs a person's approval; do not try to get the same result another way.`;
    case 'cancelled':
      return `The request for approval of ${toolName} was cancelled, so it was not run. Tell the user.`;
    case 'failed':
      return `${toolName} was not run: its approval could not be asked (${why}). Tell the user; do not try to get the same result another way.`;
  }
}

/** The text ending as a sentence: a full stop added unless it already ends in . ! ? or … (perhaps inside quotes or brackets). */
function asSentence(text: string): string {
  const trimmed = text.trimEnd();
  return /[.!?…]["'”’»)\]]*$/.test(trimmed) ? trimmed : `${trimmed}.`;
}

function messageOf(error: unknown): string {
  if (error instanceof PausepointError) return `${error.code}: ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max - 1;
  // Never cut between the two halves of a surrogate pair (the service refuses a lone one).
  if (/[\uD800-\uDBFF]/.test(text[end - 1] ?? '')) end -= 1;
  return `${text.slice(0, end)}…`;
}
