// Asking a person whether an AI agent may run one tool call: what the adapters
// for the agent frameworks (./ai.ts, ./openai-agents.ts) share. It knows no
// framework: it turns a tool call into a pause, waits with the client's `ask`,
// and turns the outcome into "run it" or a refusal the model can read.
//
// When the adapter knows the tool's arguments as a JSON Schema, the pause
// carries a form (DESIGN.md, "Typed answers"): the schema, the model's
// arguments as the proposed values, submitted by the approving option, so the
// person may change them before approving. A schema the service refuses (a
// `pattern` RE2 cannot run, a keyword outside the forms' subset, more than 30 arguments, …)
// is not rewritten: the pause is asked again without a form (and the later
// calls with that schema at once without one), and the person approves or
// rejects the arguments exactly as shown.
import { Pausepoint } from './client.js';
import { PausepointError, WaitTimeoutError } from './errors.js';
import type { CreatePauseParams, Outcome, Pause } from './types.js';

/** How many schemas the service refused as forms an approver remembers, so as not to offer them again. */
const REFUSED_SCHEMAS_KEPT = 100;

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
  /** The arguments, as the tool will receive them (an object, or its JSON text). */
  input: INPUT;
  /** What the tool does, when the framework knows. */
  description?: string | undefined;
  /** The arguments' JSON Schema, when the framework knows it: shown as a form, `input` its proposed values. */
  inputSchema?: Record<string, unknown> | undefined;
}

/** One argument a person changed before approving: its value as proposed and as approved (absent: left out). */
export interface ArgumentChange {
  argument: string;
  proposed?: unknown;
  approved?: unknown;
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
  /** Require a written reason to reject (`require_text: [rejectOption]`); needs `allowText`. Default false. */
  requireReason?: boolean | undefined;
  /**
   * Show the tool's arguments as a form the person may edit before approving
   * (when the adapter knows the tool's JSON Schema); the tool then runs with
   * their values. False: the arguments are shown as text, to approve or reject
   * as they are. Default true.
   */
  form?: boolean | undefined;
  /** The pause's expiry, reviewers and quorum, notify and metadata, passed through. */
  pause?: ToolApprovalPauseFields | undefined;
  /** Stop waiting after this many ms, cancel the pause and refuse the call. Default: until the pause expires. */
  timeoutMs?: number | undefined;
  /** Called once the pause exists, e.g. to print its `response_url` or log its id. */
  onPause?: ((pause: Pause, call: ToolCallRequest<INPUT>) => void) | undefined;
}

/** Why a tool call did not run. */
export type ToolRefusalReason = 'rejected' | 'timed_out' | 'cancelled' | 'failed' | 'invalid_values';

/** What the model is handed instead of the tool's result when the call did not run. */
export interface ToolRefusal {
  /** Always true: the tool was not run. */
  not_run: true;
  /**
   * `rejected` (a person said no), `timed_out`, `cancelled`, `failed` (the
   * question could not be asked), or `invalid_values` (the values a person
   * approved do not meet the tool's own schema).
   */
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

/**
 * Approved: `values` are the arguments the person approved (the proposed ones
 * unless they edited the form), `changes` each argument they changed.
 */
export type ToolApprovalDecision =
  | { approved: true; pause: Pause; values: unknown; edited: boolean; changes: ArgumentChange[] }
  | { approved: false; refusal: ToolRefusal };

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
  if (options.requireReason && !allowText) throw new TypeError('requireReason needs allowText');
  const resolved = { approve, reject, allowText, requireReason: options.requireReason === true };
  // A schema the service refused as a form is refused every time: each later call is asked without one at once.
  const refusedSchemas = new Set<string>();

  return {
    async decide(call, signal) {
      const refuse = (
        reason: ToolRefusalReason,
        fields: Partial<ToolRefusal> = {},
        why = '',
      ): ToolApprovalDecision => ({
        approved: false,
        refusal: toolRefusal(call.toolName, reason, fields, why),
      });
      const proposed = argumentsOf(call.input);
      const schemaKey = call.inputSchema === undefined ? undefined : canonicalJson(call.inputSchema);
      const withForm =
        options.form !== false && schemaKey !== undefined && !refusedSchemas.has(schemaKey) && proposed !== undefined;
      let params: CreatePauseParams;
      try {
        params = pauseParams(call, options, resolved, withForm);
      } catch (error) {
        return refuse('failed', {}, messageOf(error));
      }
      const ask = (asked: CreatePauseParams) =>
        client.ask(asked, {
          signal,
          timeoutMs: options.timeoutMs,
          onCreated: options.onPause && ((pause) => options.onPause?.(pause, call)),
        });
      try {
        let outcome: Outcome;
        try {
          outcome = await ask(params);
        } catch (error) {
          if (!(withForm && error instanceof PausepointError && error.code === 'invalid_form')) throw error;
          // The service refuses the tool's schema (or these values) as a form: ask about the arguments as they are.
          if (schemaKey !== undefined && refusesSchema(error) && refusedSchemas.size < REFUSED_SCHEMAS_KEPT) {
            refusedSchemas.add(schemaKey);
          }
          outcome = await ask(pauseParams(call, options, resolved, false));
        }
        const answered = { pause_id: outcome.pause.id, choice: outcome.choice, text: outcome.text };
        if (outcome.status === 'responded' && outcome.choice === approve) {
          const response = outcome.pause.response;
          const values = response?.values ?? proposed ?? call.input;
          const changes = response?.edited ? changesBetween(proposed, values) : [];
          return { approved: true, pause: outcome.pause, values, edited: changes.length > 0, changes };
        }
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

/** Whether an `invalid_form` refusal names the schema itself, not only the values proposed. */
function refusesSchema(error: PausepointError): boolean {
  const fields = (error.details as { fields?: { field?: unknown }[] } | undefined)?.fields;
  return (
    Array.isArray(fields) && fields.some(({ field }) => typeof field === 'string' && field.startsWith('form.schema'))
  );
}

interface ResolvedOptions {
  approve: string;
  reject: string;
  allowText: boolean;
  requireReason: boolean;
}

/**
 * The pause that asks about one call: the tool's name in the title, its
 * arguments in the body as indented JSON, and with `withForm` the form that
 * lets the person change them.
 */
function pauseParams<INPUT>(
  call: ToolCallRequest<INPUT>,
  options: ToolApprovalOptions<INPUT>,
  { approve, reject, allowText, requireReason }: ResolvedOptions,
  withForm: boolean,
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
    (withForm
      ? `"${approve}" runs it once, with the values in the form: change any that are wrong first, and the agent is told what you changed. "${reject}" refuses it`
      : `"${approve}" runs it once, with exactly these arguments. "${reject}" refuses it`) +
      (requireReason
        ? '; write why, and it is passed on to the agent.'
        : allowText
          ? '; a reason you write is passed on to the agent.'
          : '.'),
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
    ...(requireReason ? { require_text: [reject] } : {}),
    ...(withForm
      ? {
          form: {
            schema: formSchemaOf(call.inputSchema ?? {}),
            values: argumentsOf(call.input),
            on: [approve],
          },
        }
      : {}),
  };
}

/**
 * The tool's schema as a form's. Only the dialect marker goes: frameworks
 * emit draft-07's (`$schema`), and the keywords of the forms' subset mean
 * the same in draft 2020-12, which the service uses. Nothing that constrains
 * a value is dropped; a schema the service refuses is not shown as a form.
 */
function formSchemaOf(schema: Record<string, unknown>): Record<string, unknown> {
  const { $schema: _dialect, ...rest } = schema;
  return rest;
}

/** The top-level arguments whose values differ between the proposed and the approved arguments. */
export function changesBetween(proposed: unknown, approved: unknown): ArgumentChange[] {
  const before = isPlainObject(proposed) ? proposed : {};
  const after = isPlainObject(approved) ? approved : {};
  const changes: ArgumentChange[] = [];
  for (const argument of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const was = before[argument];
    const is = after[argument];
    if (canonicalJson(was) === canonicalJson(is)) continue;
    const change: ArgumentChange = { argument };
    if (argument in before) change.proposed = was;
    if (argument in after) change.approved = is;
    changes.push(change);
  }
  return changes;
}

/** Changes in words for the model: `amount from 129.5 to 100; note removed`. */
export function describeChanges(changes: ArgumentChange[]): string {
  return changes
    .map(({ argument, proposed, approved }) => {
      if (approved === undefined) return `${argument} removed`;
      if (proposed === undefined) return `${argument} set to ${JSON.stringify(approved)}`;
      return `${argument} from ${JSON.stringify(proposed)} to ${JSON.stringify(approved)}`;
    })
    .join('; ');
}

/** JSON with every object's keys sorted: the same text for the same value, whatever the order of its keys. */
export function canonicalJson(value: unknown): string {
  if (value === undefined) return 'undefined';
  return JSON.stringify(value, (_key, item: unknown) =>
    isPlainObject(item)
      ? Object.fromEntries(
          Object.keys(item)
            .sort()
            .map((key) => [key, item[key]]),
        )
      : item,
  );
}

/** The arguments as an object, as a form proposes them: parsed when they are JSON text; undefined when not an object. */
export function argumentsOf(input: unknown): Record<string, unknown> | undefined {
  if (isPlainObject(input)) return input;
  if (typeof input !== 'string') return undefined;
  try {
    const parsed: unknown = JSON.parse(input);
    return isPlainObject(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
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

/** A refusal of one call, its message worded for the model; `why` says what failed, for `failed` and `invalid_values`. */
export function toolRefusal(
  toolName: string,
  reason: ToolRefusalReason,
  fields: Partial<ToolRefusal> = {},
  why = '',
): ToolRefusal {
  const refusal: ToolRefusal = { not_run: true, reason, message: '', pause_id: null, choice: null, text: null };
  Object.assign(refusal, fields);
  refusal.message = refusalMessage(toolName, refusal, why);
  return refusal;
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
    case 'invalid_values':
      return `A person approved ${toolName} with arguments its schema refuses (${why}), so it was not run. Tell the user; do not try to get the same result another way.`;
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
