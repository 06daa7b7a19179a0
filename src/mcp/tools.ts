import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { CallToolResult, ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';
import { MAX_ID_LENGTH } from '../domain/ids.js';
import {
  DEFAULT_EXPIRY_SECONDS,
  DEFAULT_OPTIONS,
  MAX_BODY_LENGTH,
  MAX_EXPIRY_SECONDS,
  MAX_OPTION_LENGTH,
  MAX_OPTIONS,
  MAX_TITLE_LENGTH,
  MIN_EXPIRY_SECONDS,
} from '../domain/pause.js';
import { formatSeconds } from '../domain/units.js';
import { MAX_REVIEWERS } from '../domain/votes.js';
import { type NewQuestion, type Question, QuestionError, type Questions } from './questions.js';

// The MCP tools, one implementation for both transports: ask_human,
// wait_for_human, cancel_question and list_pending_questions (docs/agents.md,
// "MCP"). A wait is bounded (≤ MAX_TOOL_WAIT_SECONDS, under the 60 s an MCP
// client allows a call by default) and returns a resumable pause_id rather
// than hang; while it waits, a client that sent a progressToken gets a
// progress notification every few seconds, which keeps its call alive.

/** The longest one tool call waits for a human, in seconds. */
export const MAX_TOOL_WAIT_SECONDS = 55;
export const DEFAULT_WAIT_SECONDS = 50;
/** How often a waiting call reports progress, in ms. */
export const PROGRESS_EVERY_MS = 5000;
/** The most pending questions list_pending_questions returns. */
export const LIST_LIMIT = 50;

const SERVER_INFO = { name: 'pausepoint', version: '0.1.0' };

const INSTRUCTIONS = `pausepoint lets you ask a human and wait for the answer.
Call ask_human before any action a person must approve (spending or refunding money, deploying, deleting data, sending messages on someone's behalf), and act only on the answer.
If a call returns status "pending", the question is still open: call wait_for_human with its pause_id to keep waiting; do not go ahead in the meantime.
A question that expires with no default outcome, or is cancelled, is not an approval.`;

export interface McpServerOptions {
  /** Called with an error that is not an API error (its message is not shown to the client). */
  onUnexpectedError?: ((error: unknown) => void) | undefined;
  /** Called when a tool call starts; what it returns is called when the call has ended. */
  onCall?: ((tool: string) => () => void) | undefined;
}

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

const Status = z
  .enum(['pending', 'responded', 'timed_out', 'cancelled'])
  .describe('pending: no answer yet; responded: a human answered; timed_out: it expired; cancelled: withdrawn.');

/** What ask_human, wait_for_human and cancel_question return. */
const Outcome = {
  pause_id: z.string().describe('The question, for wait_for_human and cancel_question.'),
  status: Status,
  question: z.string(),
  choice: z
    .string()
    .nullable()
    .describe('The option chosen; on a timeout, the default outcome (null without one). Null while pending.'),
  text: z.string().nullable().describe('What the human wrote, when free text was allowed.'),
  responded_by: z
    .union([
      z.object({ id: z.string(), email: z.string(), name: z.string().nullable() }),
      z.object({ slack_user_id: z.string(), email: z.string().nullable(), name: z.string() }),
    ])
    .nullable()
    .describe(
      'With reviewers: the reviewer whose vote decided it ({id, email, name}). Answered from the buttons of a Slack channel: that Slack user ({slack_user_id, email, name}).',
    ),
  response_url: z
    .string()
    .nullable()
    .describe('The page where the human answers; null when reviewers were named (each has their own link).'),
  expires_at: z.string().describe('When the question expires (ISO 8601).'),
  values: z
    .record(z.string(), z.unknown())
    .nullable()
    .describe('With fields: the values the human submitted (the proposed ones unless they changed them); else null.'),
  edited: z.boolean().describe('True when the human changed the proposed values.'),
};
type OutcomeValue = z.infer<z.ZodObject<typeof Outcome>>;

const PendingQuestion = z.object({
  pause_id: z.string(),
  question: z.string(),
  options: z.array(z.string()),
  response_url: z.string().nullable(),
  expires_at: z.string(),
  created_at: z.string(),
});

const PauseId = z.string().min(1).max(MAX_ID_LENGTH).describe('The pause_id returned by ask_human.');
const WaitSeconds = z
  .number()
  .int()
  .min(0)
  .max(MAX_TOOL_WAIT_SECONDS)
  .default(DEFAULT_WAIT_SECONDS)
  .describe(
    `How long this call waits for the answer, 0–${MAX_TOOL_WAIT_SECONDS} seconds (default ${DEFAULT_WAIT_SECONDS}). The question stays open afterwards.`,
  );

// A field of ask_human's form: the flat kinds of MCP elicitation (DESIGN.md,
// "Typed answers"), each kind's keywords only; the service checks the rest.
const FieldText = {
  title: z.string().max(MAX_TITLE_LENGTH).optional().describe('The label.'),
  description: z.string().max(MAX_BODY_LENGTH).optional().describe('A hint shown under the input.'),
};
const Choice = z.object({ const: z.string(), title: z.string().optional() }).strict();
const FieldSchema = z
  .discriminatedUnion('type', [
    z
      .object({
        type: z.literal('string'),
        ...FieldText,
        minLength: z.number().int().min(0).optional(),
        maxLength: z.number().int().min(0).optional(),
        pattern: z
          .string()
          .max(MAX_BODY_LENGTH)
          .optional()
          .describe('A regular expression the text must match (RE2 syntax: no lookarounds or backreferences).'),
        format: z.enum(['email', 'uri', 'date', 'date-time']).optional(),
        enum: z.array(z.string()).min(1).optional().describe('The choices, as their values.'),
        oneOf: z.array(Choice).min(1).optional().describe('The choices, each {const, title}.'),
        'x-multiline': z.boolean().optional().describe('A text area rather than one line.'),
      })
      .strict(),
    z
      .object({
        type: z.enum(['number', 'integer']),
        ...FieldText,
        minimum: z.number().optional(),
        maximum: z.number().optional(),
      })
      .strict(),
    z.object({ type: z.literal('boolean'), ...FieldText }).strict(),
    z
      .object({
        type: z.literal('array'),
        ...FieldText,
        items: z.union([
          z.object({ type: z.literal('string'), enum: z.array(z.string()).min(1) }).strict(),
          z.object({ anyOf: z.array(Choice).min(1) }).strict(),
        ]),
        minItems: z.number().int().min(0).optional(),
        maxItems: z.number().int().min(0).optional(),
        uniqueItems: z.boolean().optional(),
      })
      .strict()
      .describe('Several choices.'),
  ])
  .describe('One field: a string (text, email, date, a choice), a number or integer, a boolean, or several choices.');

const AskHumanInput = {
  question: z
    .string()
    .min(1)
    .max(MAX_TITLE_LENGTH)
    .describe('The question, in one short line a person can answer, e.g. "Refund $120 to order #4411?"'),
  details: z
    .string()
    .max(MAX_BODY_LENGTH)
    .optional()
    .describe('Plain-text context the person needs to decide: what will happen, amounts, names, links.'),
  options: z
    .array(z.string().min(1).max(MAX_OPTION_LENGTH))
    .min(1)
    .max(MAX_OPTIONS)
    .optional()
    .describe(
      `The choices offered, all different; default [${DEFAULT_OPTIONS.map((o) => JSON.stringify(o)).join(', ')}].`,
    ),
  allow_text: z
    .boolean()
    .optional()
    .describe('Also offer a free-text box, e.g. for a reason or instructions; default false.'),
  reviewers: z
    .array(
      z.object({
        email: z.string().describe('Their email address.'),
        name: z.string().optional().describe('Their name, as greeted in the email.'),
      }),
    )
    .min(1)
    .max(MAX_REVIEWERS)
    .optional()
    .describe(
      'Named people who decide, each emailed their own link. Without reviewers, whoever opens response_url answers.',
    ),
  quorum: z
    .number()
    .int()
    .min(1)
    .max(MAX_REVIEWERS)
    .optional()
    .describe('With reviewers: how many votes for one option decide it; default 1.'),
  expires_in: z
    .number()
    .int()
    .min(MIN_EXPIRY_SECONDS)
    .max(MAX_EXPIRY_SECONDS)
    .optional()
    .describe(
      `Seconds until the question expires; default ${DEFAULT_EXPIRY_SECONDS} (${formatSeconds(DEFAULT_EXPIRY_SECONDS)}), at most ${formatSeconds(MAX_EXPIRY_SECONDS)}.`,
    ),
  timeout_default: z
    .string()
    .optional()
    .describe('The outcome if nobody answers in time: one of the options, e.g. "reject". Without it, none.'),
  fields: z
    .record(z.string().min(1).max(MAX_OPTION_LENGTH), FieldSchema)
    .optional()
    .describe(
      'A form the human fills in, e.g. to correct what you propose: each field’s name and its schema ' +
        '({"amount": {"type": "number", "minimum": 0}}). The outcome then carries the submitted values, and ' +
        'edited says whether the human changed yours.',
    ),
  required: z.array(z.string()).optional().describe('With fields: the fields that must be filled in.'),
  submit_options: z
    .array(z.string())
    .min(1)
    .optional()
    .describe(
      'With fields: the options that submit the form, e.g. ["approve"]; default every option. Another option ' +
        '(say "reject") sends no values.',
    ),
  values: z
    .record(z.string(), z.unknown())
    .optional()
    .describe('With fields: the values you propose, shown prefilled; they must meet the fields’ schemas.'),
  wait_seconds: WaitSeconds,
};

/** A server with the four tools over `questions`; connect it to one transport. */
export function createMcpServer(questions: Questions, options: McpServerOptions = {}): McpServer {
  const server = new McpServer(SERVER_INFO, { instructions: INSTRUCTIONS });
  /** Runs a call: its errors become tool errors, and onCall hears when it starts and ends. */
  const run = async (tool: string, extra: Extra, call: () => Promise<CallToolResult>): Promise<CallToolResult> => {
    const ended = options.onCall?.(tool);
    try {
      return await call();
    } catch (error) {
      return toolError(error, extra.signal.aborted ? {} : options);
    } finally {
      ended?.();
    }
  };

  server.registerTool(
    'ask_human',
    {
      title: 'Ask a human',
      description:
        'Ask a person a question and wait for the answer, e.g. before an action that needs their approval. ' +
        'They answer on a web page (response_url), or named reviewers answer through links emailed to them. ' +
        'Returns the outcome once answered; if nobody has answered within wait_seconds, returns status "pending" ' +
        'and a pause_id: then call wait_for_human with it. Act as approved only on status "responded" with the approving choice.',
      inputSchema: AskHumanInput,
      outputSchema: Outcome,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    },
    ({ wait_seconds, ...ask }, extra) =>
      run('ask_human', extra, async () => {
        const created = await questions.create(newQuestion(ask), extra.signal);
        if (wait_seconds === 0) return outcomeResult(created);
        const first = created.response_url
          ? `Asked; waiting for the answer at ${created.response_url}`
          : 'Asked the reviewers; waiting for their votes';
        return outcomeResult(
          await withProgress(extra, wait_seconds, first, () => questions.wait(created.id, wait_seconds, extra.signal)),
        );
      }),
  );

  server.registerTool(
    'wait_for_human',
    {
      title: 'Wait for a human',
      description:
        'Wait for the answer to a question asked with ask_human. Returns as soon as it is answered, expires or is ' +
        'cancelled, or after wait_seconds with status "pending": then call it again.',
      inputSchema: { pause_id: PauseId, wait_seconds: WaitSeconds },
      outputSchema: Outcome,
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    ({ pause_id, wait_seconds }, extra) =>
      run('wait_for_human', extra, async () =>
        outcomeResult(
          await withProgress(extra, wait_seconds, 'Waiting for the answer', () =>
            questions.wait(pause_id, wait_seconds, extra.signal),
          ),
        ),
      ),
  );

  server.registerTool(
    'cancel_question',
    {
      title: 'Cancel a question',
      description:
        'Withdraw a question that is still pending, e.g. when it is no longer needed; nobody can answer it afterwards. ' +
        'Fails with pause_not_pending if it was already answered, expired or cancelled.',
      inputSchema: { pause_id: PauseId },
      outputSchema: Outcome,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    ({ pause_id }, extra) =>
      run('cancel_question', extra, async () => outcomeResult(await questions.cancel(pause_id, extra.signal))),
  );

  server.registerTool(
    'list_pending_questions',
    {
      title: 'List pending questions',
      description: `List the questions still waiting for an answer, newest first (at most ${LIST_LIMIT}), e.g. to resume waiting on one with wait_for_human.`,
      outputSchema: {
        questions: z.array(PendingQuestion),
        has_more: z.boolean().describe(`True when more than ${LIST_LIMIT} are pending.`),
      },
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    (extra) =>
      run('list_pending_questions', extra, async () => {
        const { questions: pending, hasMore } = await questions.listPending(LIST_LIMIT, extra.signal);
        const structured = {
          questions: pending.map((question) => ({
            pause_id: question.id,
            question: question.title,
            options: question.options,
            response_url: question.response_url,
            expires_at: question.expires_at,
            created_at: question.created_at,
          })),
          has_more: hasMore,
        };
        const summary =
          pending.length === 0
            ? 'No questions are pending.'
            : `${pending.length}${hasMore ? '+' : ''} question${pending.length === 1 ? ' is' : 's are'} pending.`;
        return {
          content: [
            { type: 'text', text: summary },
            { type: 'text', text: JSON.stringify(structured) },
          ],
          structuredContent: structured,
        };
      }),
  );

  return server;
}

function newQuestion(ask: Omit<z.infer<z.ZodObject<typeof AskHumanInput>>, 'wait_seconds'>): NewQuestion {
  const { question, details, fields, required, values, submit_options: on, ...rest } = ask;
  const asked: NewQuestion = { title: question, ...rest };
  if (details !== undefined) asked.body = details;
  // Without fields there is no form; required and values then go to the service as a form without
  // properties, which it refuses naming them, rather than being dropped unseen.
  if (fields !== undefined || required !== undefined || values !== undefined || on !== undefined) {
    const schema: Record<string, unknown> = { type: 'object', properties: fields ?? {} };
    if (required !== undefined) schema.required = required;
    asked.form = { schema, ...(values === undefined ? {} : { values }), ...(on === undefined ? {} : { on }) };
  }
  return asked;
}

/**
 * Runs `wait`, sending the client progress every PROGRESS_EVERY_MS when it
 * asked for progress (a progressToken), the first at once with `first`.
 */
async function withProgress<T>(extra: Extra, waitSeconds: number, first: string, wait: () => Promise<T>): Promise<T> {
  const token = extra._meta?.progressToken;
  if (token === undefined || waitSeconds === 0) return wait();
  const startedAt = Date.now();
  let last = -1;
  const report = (message: string) => {
    // Progress must grow from one notification to the next.
    const progress = Math.max(last + 1, Math.floor((Date.now() - startedAt) / 1000));
    last = progress;
    extra
      .sendNotification({
        method: 'notifications/progress',
        params: { progressToken: token, progress, total: Math.max(progress, waitSeconds), message },
      })
      .catch(() => {}); // the client has gone: the wait ends on its abort
  };
  report(first);
  const timer = setInterval(
    () => report(`Still waiting for an answer (${Math.floor((Date.now() - startedAt) / 1000)} s of ${waitSeconds} s)`),
    PROGRESS_EVERY_MS,
  );
  try {
    return await wait();
  } finally {
    clearInterval(timer);
  }
}

function outcomeOf(question: Question): OutcomeValue {
  const response = question.status === 'pending' || question.status === 'cancelled' ? null : question.response;
  const decider = response?.responded_by;
  return {
    pause_id: question.id,
    status: question.status,
    question: question.title,
    choice: response?.choice ?? null,
    text: response?.text ?? null,
    responded_by: !decider
      ? null
      : 'id' in decider
        ? { id: decider.id, email: decider.email, name: decider.name }
        : { slack_user_id: decider.slack_user_id, email: decider.email, name: decider.name },
    response_url: question.response_url,
    expires_at: question.expires_at,
    values: response?.values ?? null,
    edited: response?.edited === true,
  };
}

function describeResponder(responder: OutcomeValue['responded_by']): string {
  if (!responder) return '';
  if ('slack_user_id' in responder) return ` (answered in Slack by ${responder.name})`;
  return ` (decided by ${responder.name ?? responder.email})`;
}

/** The outcome in a sentence an agent acts on. */
function describeOutcome(outcome: OutcomeValue): string {
  const quoted = (value: string) => JSON.stringify(value);
  switch (outcome.status) {
    case 'responded': {
      const by = describeResponder(outcome.responded_by);
      const wrote = outcome.text === null ? '' : `, and wrote ${quoted(outcome.text)}`;
      const chose = outcome.choice === null ? 'answered' : `chose ${quoted(outcome.choice)}`;
      const values =
        outcome.values === null
          ? ''
          : ` With that answer they submitted these values${outcome.edited ? ', changed from the ones proposed' : ', as proposed'}: ${JSON.stringify(outcome.values)}.`;
      return `The human ${chose}${wrote}${by}.${values}`;
    }
    case 'timed_out':
      return outcome.choice === null
        ? 'Nobody answered before the question expired, and it had no default outcome: this is not an approval.'
        : `Nobody answered before the question expired; its default outcome applies: ${quoted(outcome.choice)}.`;
    case 'cancelled':
      return 'The question was cancelled; nobody will answer it. This is not an approval.';
    case 'pending': {
      const where = outcome.response_url
        ? ` If the human has not seen the question yet, give them this link to answer it: ${outcome.response_url}`
        : ' The reviewers answer through their own links.';
      return (
        `No answer yet. Call wait_for_human with pause_id ${quoted(outcome.pause_id)} to keep waiting; ` +
        `the question stays open until ${outcome.expires_at}. Do not go ahead in the meantime.${where}`
      );
    }
  }
}

function outcomeResult(question: Question): CallToolResult {
  const outcome = outcomeOf(question);
  return {
    content: [
      { type: 'text', text: describeOutcome(outcome) },
      { type: 'text', text: JSON.stringify(outcome) },
    ],
    structuredContent: outcome,
  };
}

/** The tool's own names for the API's fields, in error messages: `form.schema.properties.amount` is `fields.amount`. */
function toolFieldName(field: string): string {
  const renamed: Array<[RegExp, string]> = [
    [/^title\b/, 'question'],
    [/^body\b/, 'details'],
    [/^form\.schema\.properties\b/, 'fields'],
    [/^form\.schema\.required\b/, 'required'],
    [/^form\.schema\b/, 'fields'],
    [/^form\.values\b/, 'values'],
    [/^form\.on\b/, 'submit_options'],
    [/^form\b/, 'fields'],
  ];
  for (const [pattern, name] of renamed) {
    if (pattern.test(field)) return field.replace(pattern, name);
  }
  return field;
}

/**
 * An API error as an MCP tool error (isError) with its code and message;
 * anything else as internal_error, told to onUnexpectedError (not when the
 * call was cancelled: its error is the cancel's, and nobody reads the answer).
 */
function toolError(error: unknown, options: McpServerOptions): CallToolResult {
  let code = 'internal_error';
  let message = 'Something went wrong on our side.';
  if (error instanceof QuestionError) {
    code = error.code;
    message = error.message;
    const fields = error.details?.fields;
    if ((code === 'invalid_request' || code === 'invalid_form') && Array.isArray(fields) && fields.length > 0) {
      const named = (fields as Array<{ field: string; problem: string }>).map(
        ({ field, problem }) => `${toolFieldName(field)} ${problem}`,
      );
      message = `Invalid request: ${named.join('; ')}.`;
    }
  } else {
    options.onUnexpectedError?.(error);
  }
  return { isError: true, content: [{ type: 'text', text: `${code}: ${message}` }] };
}
