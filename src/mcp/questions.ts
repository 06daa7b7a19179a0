// What the MCP tools need from pausepoint, whichever way it is reached: the
// service's own actions (the /mcp endpoint) or the API through
// @pausepoint/sdk (`pausepoint mcp` over stdio). The tools (tools.ts) are
// written once against this.

import type { PauseStatus } from '../domain/pause.js';

/** A pause as the tools read it: the fields of the API's pause object they use. */
export interface Question {
  id: string;
  status: PauseStatus;
  title: string;
  options: string[];
  /** The page a human answers on; null when the pause has reviewers (each has their own link). */
  response_url: string | null;
  expires_at: string;
  created_at: string;
  response: {
    choice: string | null;
    text: string | null;
    /** On a pause with reviewers, the one whose vote decided it (or the Slack user who answered from a channel). */
    responded_by?:
      | { id: string; email: string; name: string | null }
      | { slack_user_id: string; email: string | null; name: string }
      | null
      | undefined;
    /** The form's values as answered (null without a form, or for an option that does not submit it). */
    values?: Record<string, unknown> | null | undefined;
    /** True when the values differ from the proposed ones. */
    edited?: boolean | undefined;
  } | null;
}

/** What ask_human creates: the fields of the API's create request it offers. */
export interface NewQuestion {
  title: string;
  body?: string | undefined;
  options?: string[] | undefined;
  allow_text?: boolean | undefined;
  reviewers?: Array<{ email: string; name?: string | undefined }> | undefined;
  quorum?: number | undefined;
  expires_in?: number | undefined;
  timeout_default?: string | undefined;
  /** The form the human fills in: a JSON Schema of the fields, and the values proposed. */
  form?: { schema: Record<string, unknown>; values?: Record<string, unknown> | undefined } | undefined;
}

/**
 * pausepoint as the tools use it, on behalf of one API key. A failure the
 * caller should hear of (the API's errors) is thrown as a QuestionError; any
 * other error is reported as an internal one, without its message.
 */
export interface Questions {
  create(question: NewQuestion, signal: AbortSignal): Promise<Question>;
  /** The pause once it has left pending, or as it stands after `waitSeconds` (or an abort). */
  wait(pauseId: string, waitSeconds: number, signal: AbortSignal): Promise<Question>;
  cancel(pauseId: string, signal: AbortSignal): Promise<Question>;
  /** The newest pending pauses, at most `limit`, and whether there are more. */
  listPending(limit: number, signal: AbortSignal): Promise<{ questions: Question[]; hasMore: boolean }>;
}

/** An API error, with its code (`not_found`, `pause_not_pending`, `unauthorized`, …), for the caller. */
export class QuestionError extends Error {
  override name = 'QuestionError';

  constructor(
    readonly code: string,
    message: string,
    readonly details?: Record<string, unknown> | undefined,
  ) {
    super(message);
  }
}
