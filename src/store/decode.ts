import type { PauseForEvent } from '../domain/events.js';
import type { Form, JsonObject, OptionStyle } from '../domain/form.js';
import type { DeliveryChannel, Escalation, Pause, PauseNotify, Question, SlackResponder } from '../domain/pause.js';
import type { PausesTable } from './schema.js';

// Rows to domain values and back: the store alone knows that JSON is stored
// as text and booleans as 0/1 (schema.ts says why), so only it parses and
// stringifies them.

/** A stored JSON column, decoded; null stays null. */
const parseJson = <T>(text: string | null): T | null => (text === null ? null : (JSON.parse(text) as T));

/** Where a pause's question is sent beyond its link: what usesSlackApp reads. */
export const decodeReach = (row: Pick<PausesTable, 'notify' | 'deliver'>): Pick<Pause, 'notify' | 'deliver'> => ({
  notify: parseJson<PauseNotify>(row.notify),
  deliver: parseJson<DeliveryChannel[]>(row.deliver ?? null),
});

/** A pause row as the domain sees it. */
export function decodePause(row: PausesTable): Pause {
  return {
    id: row.id,
    developerId: row.developer_id,
    mode: row.mode,
    status: row.status,
    title: row.title,
    body: row.body,
    ...decodeAnswerRules(row),
    expiresAt: row.expires_at,
    timeoutDefault: row.timeout_default,
    metadata: JSON.parse(row.metadata) as Record<string, unknown>,
    ...decodeReach(row),
    optionsStyle: parseJson<Record<string, OptionStyle>>(row.options_style) ?? {},
    responseChoice: row.response_choice,
    responseText: row.response_text,
    responseAt: row.response_at,
    responseValues: parseJson<JsonObject>(row.response_values),
    responseEdited: row.response_edited === null ? null : row.response_edited === 1,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    veto: parseJson<string[]>(row.veto) ?? [],
    remindEvery: row.remind_every,
    remindMax: row.remind_max,
    escalation: parseJson<Escalation>(row.escalate),
    respondedBy: row.responded_by,
    respondedBySlack: parseJson<SlackResponder>(row.responded_by_slack ?? null),
    remindAt: row.remind_at,
    remindersSent: row.reminders_sent,
    escalateAt: row.escalate_at,
    escalatedAt: row.escalated_at,
  };
}

/** The columns an answer is checked against (answerProblems), and whether the pause has reviewers. */
export const ANSWER_RULE_COLUMNS = [
  'quorum',
  'options',
  'allow_text',
  'require_text',
  'form_schema',
  'form_values',
  'form_on',
] as const satisfies readonly (keyof PausesTable)[];

export type AnswerRules = Question & Pick<Pause, 'quorum'>;

/** What an answer is checked against, decoded: an answer with values reads only these columns. */
export const decodeAnswerRules = (row: Pick<PausesTable, (typeof ANSWER_RULE_COLUMNS)[number]>): AnswerRules => ({
  quorum: row.quorum,
  options: JSON.parse(row.options) as string[],
  allowText: row.allow_text === 1,
  requireText: parseJson<string[]>(row.require_text) ?? [],
  form: decodeForm(row),
});

const decodeForm = (row: Pick<PausesTable, 'form_schema' | 'form_values' | 'form_on'>): Form | null =>
  row.form_schema === null
    ? null
    : {
        schema: JSON.parse(row.form_schema) as JsonObject,
        values: parseJson<JsonObject>(row.form_values),
        on: parseJson<string[]>(row.form_on) ?? [],
      };

/** A stored JSON column from a value; null, or empty when `empty` says so, stays null. */
const toJson = (value: unknown, empty = false): string | null =>
  value === null || empty ? null : JSON.stringify(value);

/** The columns an event is written from, decoded: the answer's hot path returns only these. */
export const decodeEventSource = (
  row: Pick<
    PausesTable,
    | 'id'
    | 'developer_id'
    | 'mode'
    | 'metadata'
    | 'response_choice'
    | 'response_text'
    | 'response_at'
    | 'response_values'
    | 'response_edited'
    | 'expires_at'
  >,
): PauseForEvent & Pick<Pause, 'mode'> => ({
  id: row.id,
  developerId: row.developer_id,
  mode: row.mode,
  metadata: JSON.parse(row.metadata) as Record<string, unknown>,
  responseChoice: row.response_choice,
  responseText: row.response_text,
  responseAt: row.response_at,
  responseValues: parseJson<JsonObject>(row.response_values),
  responseEdited: row.response_edited === null ? null : row.response_edited === 1,
  expiresAt: row.expires_at,
});

/** Who answered from Slack, as the pauses' responded_by_slack column keeps it (JSON); null stays null. */
export const encodeSlackResponder = (responder: SlackResponder | null): string | null =>
  responder === null ? null : JSON.stringify(responder);

/** A pause as its row is written. A pause without reviewers (quorum null) stores null veto, as it always has. */
export function encodePause(pause: Pause): PausesTable {
  return {
    id: pause.id,
    developer_id: pause.developerId,
    mode: pause.mode,
    status: pause.status,
    title: pause.title,
    body: pause.body,
    options: JSON.stringify(pause.options),
    allow_text: pause.allowText ? 1 : 0,
    expires_at: pause.expiresAt,
    timeout_default: pause.timeoutDefault,
    metadata: JSON.stringify(pause.metadata),
    notify: pause.notify === null ? null : JSON.stringify(pause.notify),
    response_choice: pause.responseChoice,
    response_text: pause.responseText,
    response_at: pause.responseAt,
    form_schema: toJson(pause.form?.schema ?? null),
    form_values: toJson(pause.form?.values ?? null),
    form_on: toJson(pause.form?.on ?? null),
    require_text: toJson(pause.requireText, pause.requireText.length === 0),
    options_style: toJson(pause.optionsStyle, Object.keys(pause.optionsStyle).length === 0),
    response_values: toJson(pause.responseValues),
    response_edited: pause.responseEdited === null ? null : pause.responseEdited ? 1 : 0,
    created_at: pause.createdAt,
    updated_at: pause.updatedAt,
    quorum: pause.quorum,
    veto: pause.quorum === null ? null : JSON.stringify(pause.veto),
    remind_every: pause.remindEvery,
    remind_max: pause.remindMax,
    escalate: pause.escalation === null ? null : JSON.stringify(pause.escalation),
    responded_by: pause.respondedBy,
    deliver: toJson(pause.deliver),
    remind_at: pause.remindAt,
    reminders_sent: pause.remindersSent,
    escalate_at: pause.escalateAt,
    escalated_at: pause.escalatedAt,
  };
}
