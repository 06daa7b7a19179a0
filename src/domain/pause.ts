// The outcome of a pause as the API shows it: always the stored one. A pause
// past its expires_at stays `pending` until the expirer records the timeout
// (within a second). It is never shown as timed out earlier: an answer that
// started before expires_at may still commit, and a program must never see
// one outcome and then another.

import { type Form, formProblems, type JsonObject, type OptionStyle, sameValues } from './form.js';
import type { Mode } from './keys.js';
import type { FieldProblem } from './problems.js';

export type PauseStatus = 'pending' | 'responded' | 'timed_out' | 'cancelled';

/** Whom a pause without reviewers notifies, as the developer asked. */
export interface PauseNotify {
  email?: string[];
  slack_webhook_url?: string;
  /** A channel the Slack app posts the question to, with its buttons. */
  slack?: { channel: string };
}

/** An escalation: after how many seconds, to whom. */
export interface Escalation {
  after: number;
  reviewers: Array<{ email: string; name: string | null }>;
}

/** A pause, as the store hands it out (times are ISO 8601 UTC text). */
export interface Pause {
  id: string;
  developerId: string;
  mode: Mode;
  status: PauseStatus;
  title: string;
  body: string | null;
  options: string[];
  allowText: boolean;
  expiresAt: string;
  timeoutDefault: string | null;
  metadata: Record<string, unknown>;
  notify: PauseNotify | null;
  /** The form the answer fills in; null for a pause without. */
  form: Form | null;
  /** The options that need a written reason; empty when none do. */
  requireText: string[];
  /** How each option the developer marked is shown; the others look alike. */
  optionsStyle: Record<string, OptionStyle>;
  responseChoice: string | null;
  responseText: string | null;
  responseAt: string | null;
  /** The answer's values: those submitted, or the proposed ones; null unless the choice submits the form. */
  responseValues: JsonObject | null;
  /**
   * Whether responseValues differ from the proposed values, once answered;
   * null on a pause without a form (its events then carry neither field, as before forms).
   */
  responseEdited: boolean | null;
  createdAt: string;
  updatedAt: string;
  /** Votes an option needs to decide; null on a pause without reviewers. */
  quorum: number | null;
  /** The options a single vote decides; empty without reviewers. */
  veto: string[];
  remindEvery: number | null;
  remindMax: number | null;
  /** The escalation asked for, kept once it has happened (escalatedAt says when). */
  escalation: Escalation | null;
  /** The reviewer whose vote decided the pause. */
  respondedBy: string | null;
  /** How reviewers are sent the question (reminders and escalation too); null: email. */
  deliver: DeliveryChannel[] | null;
  /** Who answered from a channel's Slack buttons; absent or null otherwise. */
  respondedBySlack?: SlackResponder | null;
  /** When the next reminder falls due; null when none is left or the pause is decided. */
  remindAt: string | null;
  remindersSent: number | null;
  /** When the escalation falls due; null once escalated or decided. */
  escalateAt: string | null;
  escalatedAt: string | null;
}

/**
 * Whether the Slack app may have posted about this pause: its question to a
 * channel, or to its reviewers. Only such a pause has messages to update when
 * it closes.
 */
export const usesSlackApp = (pause: Pick<Pause, 'notify' | 'deliver'>): boolean =>
  pause.notify?.slack !== undefined || (pause.deliver?.includes('slack') ?? false);

/** How reviewers may be sent the question. */
export const DELIVERY_CHANNELS = ['email', 'slack'] as const;
export type DeliveryChannel = (typeof DELIVERY_CHANNELS)[number];

/** A Slack user who answered a pause from its buttons in a channel. */
export interface SlackResponder {
  slack_user_id: string;
  email: string | null;
  name: string;
}

/** The fields of a pause that only a pause with reviewers sets. */
export type PauseReviewerFields = Pick<
  Pause,
  | 'quorum'
  | 'veto'
  | 'remindEvery'
  | 'remindMax'
  | 'escalation'
  | 'respondedBy'
  | 'deliver'
  | 'remindAt'
  | 'remindersSent'
  | 'escalateAt'
  | 'escalatedAt'
>;

/** The fields a pause's outcome is read from. */
export type StoredOutcome = Pick<
  Pause,
  'status' | 'expiresAt' | 'responseChoice' | 'responseText' | 'responseAt' | 'responseValues' | 'responseEdited'
>;

export interface PauseResponse {
  choice: string | null;
  text: string | null;
  /** The form's values the answer carries; null without a form, or for a choice that does not submit it. */
  values: JsonObject | null;
  /** True when the values differ from the proposed ones. */
  edited: boolean;
  response_at: string;
}

export interface PauseView {
  status: PauseStatus;
  response: PauseResponse | null;
}

/** Pending, but past expires_at: answers and cancels already lose. */
export const isOverdue = (pause: Pick<Pause, 'status' | 'expiresAt'>, now: string) =>
  pause.status === 'pending' && pause.expiresAt <= now;

/** The pause's outcome as the API shows it now: its status and, once answered or timed out, the response. */
export function currentOutcome(pause: StoredOutcome): PauseView {
  if (pause.status === 'responded' || pause.status === 'timed_out') {
    return {
      status: pause.status,
      response: {
        choice: pause.responseChoice,
        text: pause.responseText,
        values: pause.responseValues,
        edited: pause.responseEdited === true,
        response_at: pause.responseAt ?? pause.expiresAt,
      },
    };
  }
  return { status: pause.status, response: null };
}

/** How soon and how late a pause may expire, in seconds from its creation. */
export const MIN_EXPIRY_SECONDS = 1;
export const MAX_EXPIRY_SECONDS = 30 * 24 * 60 * 60;
export const DEFAULT_EXPIRY_SECONDS = 24 * 60 * 60;
/** The most bytes a pause's metadata may take as JSON. */
export const MAX_METADATA_BYTES = 16 * 1024;
export const DEFAULT_OPTIONS = ['approve', 'reject'];
/** The longest title (the question) and body (its details), in characters. */
export const MAX_TITLE_LENGTH = 200;
export const MAX_BODY_LENGTH = 10_000;
/** The most options a pause may offer, and the longest option. */
export const MAX_OPTIONS = 10;
export const MAX_OPTION_LENGTH = 100;
/** The most characters a human's free-text answer may have. */
export const MAX_TEXT_LENGTH = 10_000;
/** The most addresses a pause's `notify.email` may list. */
export const MAX_NOTIFY_EMAILS = 10;

/** An answer to a pause's question, as a person submits it; `values` undefined when not sent. */
export interface Answer {
  choice: string;
  text: string | null;
  values?: unknown;
}

/** An answer's text as recorded: blank text is no text, so a required reason is not given by spaces. */
export const givenText = (text: string | null | undefined): string | null => (text?.trim() ? text : null);

/** The parts of a pause an answer is checked against. */
export type Question = Pick<Pause, 'options' | 'allowText' | 'form' | 'requireText'>;

const quoted = (options: readonly string[]) => options.map((option) => JSON.stringify(option)).join(', ');

/**
 * Everything wrong with an answer to this pause's question, each field named
 * (`choice`, `text`, `values` or a field of the values, e.g. `values.amount`);
 * empty if nothing is. A choice that is not an option is the only problem told.
 */
export function answerProblems(pause: Question, answer: Answer): FieldProblem[] {
  const { choice, text, values } = answer;
  if (!pause.options.includes(choice)) return [{ field: 'choice', problem: 'must be one of the options' }];
  const problems: FieldProblem[] = [];
  if (text !== null && !pause.allowText) problems.push({ field: 'text', problem: 'is not accepted for this pause' });
  else if (text !== null && text.length > MAX_TEXT_LENGTH)
    problems.push({ field: 'text', problem: `must be at most ${MAX_TEXT_LENGTH.toLocaleString('en-US')} characters` });
  else if (text === null && pause.requireText.includes(choice))
    problems.push({ field: 'text', problem: `is required: a reason must be given for ${JSON.stringify(choice)}` });
  const { form } = pause;
  if (values !== undefined) {
    if (form === null) problems.push({ field: 'values', problem: 'is not accepted: this pause has no form' });
    else if (!form.on.includes(choice))
      problems.push({
        field: 'values',
        problem: `is not accepted with ${JSON.stringify(choice)}: only ${quoted(form.on)} submit the form`,
      });
    else problems.push(...formProblems(form, values, 'values'));
  } else if (form?.on.includes(choice) && form.values === null) {
    problems.push({ field: 'values', problem: 'is required: this form proposes no values to keep' });
  }
  return problems;
}

/**
 * The values an answer records, once answerProblems found none: those sent,
 * or the proposed ones when none were sent; null for a choice that does not
 * submit the form. `edited` when they differ from the proposed ones.
 */
export function answerValues(
  pause: Pick<Pause, 'form'>,
  answer: Pick<Answer, 'choice' | 'values'>,
): { values: JsonObject | null; edited: boolean } {
  const { form } = pause;
  if (form === null || !form.on.includes(answer.choice)) return { values: null, edited: false };
  if (answer.values === undefined) return { values: form.values, edited: false };
  const values = answer.values as JsonObject;
  return { values, edited: form.values === null || !sameValues(values, form.values) };
}
