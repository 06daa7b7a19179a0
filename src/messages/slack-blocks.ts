import type { OptionStyle } from '../domain/form.js';
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
      const style = question.optionsStyle[option];
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
