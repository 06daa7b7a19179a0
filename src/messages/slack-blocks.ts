import { type OptionStyle, styleOf } from '../domain/form.js';
import { type Choice, FIELD_PREFIX, type FormField } from '../domain/form-fields.js';
import { formatUtc } from '../domain/time-format.js';

// What the Slack app posts (Block Kit): a question with one button per option,
// and what the message becomes once the pause is closed. Every text the
// developer or a person wrote is `plain_text`, so nothing in it is read as a
// mention, a link or formatting.

/** The block_id of a question's buttons: the pause it asks about, read back when one is clicked. */
export const ACTIONS_BLOCK_PREFIX = 'pausepoint:';
/** The action_id of an option's button (its value is the option). */
export const ANSWER_ACTION = 'pausepoint_answer';

/** Block Kit's limits: a header's text, a button's label, a section's text. */
const HEADER_MAX = 150;
const BUTTON_MAX = 75;
const SECTION_MAX = 3000;

export interface SlackMessage {
  /** The notification's fallback text (and what the notification shows). */
  text: string;
  blocks: object[];
}

/**
 * A text that is not meant as markup, escaped as Slack documents ("Escaping
 * text": `&`, `<`, `>`), for the fields Slack reads as mrkdwn (a message's
 * fallback `text`, an ephemeral's): `<!channel>` or `<https://x|Approve>`
 * from a title or an error message stays text, not a mention or a link.
 */
export const slackEscape = (text: string): string =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

const cut = (text: string, max: number) => (text.length <= max ? text : `${text.slice(0, max - 1)}…`);
const plain = (text: string) => ({ type: 'plain_text', text, emoji: false });

export interface SlackQuestion {
  pauseId: string;
  title: string;
  body: string | null;
  options: string[];
  optionsStyle: Record<string, OptionStyle>;
  expiresAt: string;
  /** For a reviewer: how the pause is decided. */
  reviewerNote?: string;
  kind?: 'question' | 'reminder';
}

export function slackQuestion(question: SlackQuestion): SlackMessage {
  const lead = question.kind === 'reminder' ? 'Reminder: decision needed' : 'Decision needed';
  const blocks: object[] = [{ type: 'header', text: plain(cut(question.title, HEADER_MAX)) }];
  if (question.body) blocks.push({ type: 'section', text: plain(cut(question.body, SECTION_MAX)) });
  if (question.reviewerNote) blocks.push({ type: 'context', elements: [plain(question.reviewerNote)] });
  blocks.push({
    type: 'actions',
    block_id: `${ACTIONS_BLOCK_PREFIX}${question.pauseId}`,
    elements: question.options.map((option, index) => {
      const style = styleOf(question.optionsStyle, option);
      return {
        type: 'button',
        action_id: `${ANSWER_ACTION}_${index}`,
        text: plain(cut(option, BUTTON_MAX)),
        value: option,
        ...(style ? { style } : {}),
      };
    }),
  });
  blocks.push({ type: 'context', elements: [plain(`Expires ${formatUtc(question.expiresAt)}.`)] });
  return { text: `${lead}: ${cut(question.title, HEADER_MAX)}`, blocks };
}

export interface SlackVoter {
  name: string;
  choice: string;
}

export interface SlackOutcome {
  title: string;
  body: string | null;
  status: 'responded' | 'timed_out' | 'cancelled';
  choice: string | null;
  /** Who decided: a reviewer's or a Slack user's name, or the address of whoever answered. */
  decidedBy: string | null;
  votes: SlackVoter[];
}

/** What a question's message becomes once its pause is closed: the outcome, who decided, each vote; no buttons. */
export function slackOutcome(outcome: SlackOutcome): SlackMessage {
  const line =
    outcome.status === 'responded'
      ? `Decided: ${outcome.choice}${outcome.decidedBy ? ` (by ${outcome.decidedBy})` : ''}`
      : outcome.status === 'timed_out'
        ? `Timed out${outcome.choice ? `: ${outcome.choice} (the default)` : ' without an answer'}`
        : 'Cancelled: this question no longer needs an answer';
  const blocks: object[] = [{ type: 'header', text: plain(cut(outcome.title, HEADER_MAX)) }];
  if (outcome.body) blocks.push({ type: 'section', text: plain(cut(outcome.body, SECTION_MAX)) });
  blocks.push({ type: 'section', text: plain(line) });
  if (outcome.votes.length > 0) {
    const votes = outcome.votes.map((vote) => `${vote.name}: ${vote.choice}`).join('\n');
    blocks.push({ type: 'context', elements: [plain(cut(`Votes:\n${votes}`, SECTION_MAX))] });
  }
  return { text: `${line}: ${cut(outcome.title, HEADER_MAX)}`, blocks };
}

// --- The modal a click opens when the answer needs a reason or the form's fields ---

/** The modal's callback_id, read back from its view_submission. */
export const ANSWER_MODAL = 'pausepoint_answer_modal';
/** The block of the written reason; a form field's block is FIELD_PREFIX + its name. */
export const TEXT_BLOCK = 'text';
/** Every input's action_id (its block says which field it is). */
export const INPUT_ACTION = 'value';
/** Block Kit's limits: a modal's title and submit label, a text input, an option's text and value. */
const MODAL_TITLE_MAX = 24;
const TEXT_INPUT_MAX = 3000;
const OPTION_TEXT_MAX = 75;

export interface SlackModalQuestion {
  title: string;
  body: string | null;
  choice: string;
  /** Whether a reason is offered, and whether this choice needs one. */
  allowText: boolean;
  requireText: boolean;
  /** The form's fields with their prefilled text, when this choice submits the form. */
  fields: Array<{ field: FormField; text: string | string[] }>;
  /** Read back by the submission: which pause and choice (never a token). */
  privateMetadata: string;
}

const option = (choice: Choice) => ({ text: plain(cut(choice.label, OPTION_TEXT_MAX)), value: choice.text });

/** A form field as a Block Kit input: the same kinds, labels, hints and prefilled values as the page's. */
function fieldInput(field: FormField, text: string | string[]): object {
  const { kind } = field;
  const single = Array.isArray(text) ? '' : text;
  const selected = (choices: Choice[]) => choices.filter((c) => (Array.isArray(text) ? text : [text]).includes(c.text));
  let element: Record<string, unknown>;
  if (kind.kind === 'boolean') {
    const yes = { text: plain(cut(field.label, OPTION_TEXT_MAX)), value: 'true' };
    element = { type: 'checkboxes', options: [yes], ...(text.includes('true') ? { initial_options: [yes] } : {}) };
  } else if (kind.kind === 'choices') {
    const initial = selected(kind.choices).map(option);
    element = {
      type: 'multi_static_select',
      options: kind.choices.map(option),
      ...(initial.length > 0 ? { initial_options: initial } : {}),
    };
  } else if (kind.kind === 'choice') {
    const [initial] = selected(kind.choices).map(option);
    element = {
      type: 'static_select',
      options: kind.choices.map(option),
      ...(initial ? { initial_option: initial } : {}),
    };
  } else if (kind.kind === 'number') {
    element = { type: 'number_input', is_decimal_allowed: !kind.integer, ...(single ? { initial_value: single } : {}) };
  } else {
    element = {
      type: 'plain_text_input',
      multiline: kind.kind === 'multiline' || kind.kind === 'json',
      ...(single ? { initial_value: cut(single, TEXT_INPUT_MAX) } : {}),
    };
  }
  return {
    type: 'input',
    block_id: `${FIELD_PREFIX}${field.name}`,
    optional: !field.required || field.nullable,
    label: plain(cut(field.label, 2000)),
    ...(field.hint ? { hint: plain(cut(field.hint, 2000)) } : {}),
    element: { ...element, action_id: INPUT_ACTION },
  };
}

/** The modal that takes an answer's reason and the form's fields, as the response page does. */
export function slackAnswerModal(question: SlackModalQuestion): object {
  const blocks: object[] = [{ type: 'section', text: plain(cut(question.title, SECTION_MAX)) }];
  if (question.body) blocks.push({ type: 'context', elements: [plain(cut(question.body, SECTION_MAX))] });
  for (const { field, text } of question.fields) blocks.push(fieldInput(field, text));
  if (question.allowText) {
    blocks.push({
      type: 'input',
      block_id: TEXT_BLOCK,
      optional: !question.requireText,
      label: plain(question.requireText ? 'Reason (required)' : 'Comment (optional)'),
      element: { type: 'plain_text_input', action_id: INPUT_ACTION, multiline: true, max_length: TEXT_INPUT_MAX },
    });
  }
  return {
    type: 'modal',
    callback_id: ANSWER_MODAL,
    private_metadata: question.privateMetadata,
    title: plain(cut('Your answer', MODAL_TITLE_MAX)),
    submit: plain(cut(question.choice, MODAL_TITLE_MAX)),
    close: plain('Cancel'),
    blocks,
  };
}
