import type { PauseStatus, PausesTable } from '../store/schema.js';

// The pause as the API shows it, derived from its row. A pending pause whose
// expires_at has passed is shown as timed out at once: the expirer records
// exactly that within a second, and every answer or cancel already loses.

export interface PauseResponse {
  choice: string | null;
  text: string | null;
  response_at: string;
}

export interface PauseView {
  status: PauseStatus;
  response: PauseResponse | null;
}

export const isOverdue = (row: Pick<PausesTable, 'status' | 'expires_at'>, now: string) =>
  row.status === 'pending' && row.expires_at <= now;

export function outcomeOf(
  row: Pick<
    PausesTable,
    'status' | 'expires_at' | 'timeout_default' | 'response_choice' | 'response_text' | 'response_at'
  >,
  now: string,
): PauseView {
  if (isOverdue(row, now)) {
    return { status: 'timed_out', response: { choice: row.timeout_default, text: null, response_at: row.expires_at } };
  }
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

export const MAX_EXPIRY_SECONDS = 30 * 24 * 60 * 60;
export const DEFAULT_EXPIRY_SECONDS = 24 * 60 * 60;
export const MAX_METADATA_BYTES = 16 * 1024;
export const DEFAULT_OPTIONS = ['approve', 'reject'];
