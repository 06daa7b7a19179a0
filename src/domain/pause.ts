// The outcome of a pause as the API shows it: always the stored one. A pause
// past its expires_at stays `pending` until the expirer records the timeout
// (within a second). It is never shown as timed out earlier: an answer that
// started before expires_at may still commit, and a program must never see
// one outcome and then another.

export type PauseStatus = 'pending' | 'responded' | 'timed_out' | 'cancelled';

/** The stored fields a pause's outcome is read from. */
export interface StoredOutcome {
  status: PauseStatus;
  expires_at: string;
  response_choice: string | null;
  response_text: string | null;
  response_at: string | null;
}

export interface PauseResponse {
  choice: string | null;
  text: string | null;
  response_at: string;
}

export interface PauseView {
  status: PauseStatus;
  response: PauseResponse | null;
}

/** Pending, but past expires_at: answers and cancels already lose. */
export const isOverdue = (row: Pick<StoredOutcome, 'status' | 'expires_at'>, now: string) =>
  row.status === 'pending' && row.expires_at <= now;

/** The pause's outcome as the API shows it now: its status and, once answered or timed out, the response. */
export function currentOutcome(row: StoredOutcome): PauseView {
  if (row.status === 'responded' || row.status === 'timed_out') {
    return {
      status: row.status,
      response: {
        choice: row.response_choice,
        text: row.response_text,
        response_at: row.response_at ?? row.expires_at,
      },
    };
  }
  return { status: row.status, response: null };
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

/** Why an answer does not fit a pause's question: the field and what is wrong with it. */
export interface AnswerProblem {
  field: 'choice' | 'text';
  problem: string;
}

/**
 * What is wrong with an answer to this question (its stored options, a JSON
 * array, and allow_text), or null if nothing is: the choice first, then the text.
 */
export function answerProblem(
  question: { options: string; allow_text: number },
  choice: string,
  text: string | null,
): AnswerProblem | null {
  if (!(JSON.parse(question.options) as string[]).includes(choice))
    return { field: 'choice', problem: 'must be one of the options' };
  if (text === null) return null;
  if (question.allow_text !== 1) return { field: 'text', problem: 'is not accepted for this pause' };
  if (text.length > MAX_TEXT_LENGTH)
    return { field: 'text', problem: `must be at most ${MAX_TEXT_LENGTH.toLocaleString('en-US')} characters` };
  return null;
}
