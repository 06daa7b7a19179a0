import type { ServiceContext } from '../context.js';
import { isoTime } from '../domain/clock.js';
import { normaliseEmail } from '../domain/email.js';
import { newId } from '../domain/ids.js';
import { DEFAULT_REMIND_MAX } from '../domain/votes.js';
import { ApiError, type FieldProblem, invalidFields } from '../errors.js';
import type { PausesTable, ReviewersTable } from '../store/schema.js';

// The reviewer fields of a new pause: the rules that span fields (the schema
// checks each field's shape), the reviewers' rows and the pause's columns for
// quorum, veto, reminders and escalation.

export interface ReviewerRequest {
  email: string;
  name?: string;
}

export interface ReviewerFields {
  reviewers?: ReviewerRequest[];
  quorum?: number;
  veto?: string[];
  remind_every?: number;
  remind_max?: number;
  escalate?: { after: number; reviewers: ReviewerRequest[] };
}

/** What the stored escalation holds until it falls due. */
export interface StoredEscalation {
  after: number;
  reviewers: Array<{ email: string; name: string | null }>;
}

type ReviewerColumns = Pick<
  PausesTable,
  | 'quorum'
  | 'veto'
  | 'remind_every'
  | 'remind_max'
  | 'escalate'
  | 'remind_at'
  | 'reminders_sent'
  | 'escalate_at'
  | 'escalated_at'
>;

const ONLY_WITH_REVIEWERS = ['quorum', 'veto', 'remind_every', 'remind_max', 'escalate'] as const;

/** Every cross-field problem of the reviewer fields, so one 400 names them all. */
function problemsOf(request: ReviewerFields & { notify?: object }, options: string[], expiresInMs: number) {
  const problems: FieldProblem[] = [];
  const reviewers = request.reviewers;
  if (!reviewers) {
    for (const field of ONLY_WITH_REVIEWERS)
      if (request[field] !== undefined) problems.push({ field, problem: 'needs reviewers' });
    return problems;
  }
  if (request.notify !== undefined)
    problems.push({
      field: 'notify',
      problem: 'cannot be combined with reviewers: each reviewer is emailed their own link',
    });
  if (request.quorum !== undefined && request.quorum > reviewers.length)
    problems.push({ field: 'quorum', problem: `must be at most the number of reviewers (${reviewers.length})` });
  (request.veto ?? []).forEach((option, index) => {
    if (!options.includes(option)) problems.push({ field: `veto.${index}`, problem: 'must be one of the options' });
  });
  if (request.remind_max !== undefined && request.remind_every === undefined)
    problems.push({ field: 'remind_max', problem: 'needs remind_every' });
  if (request.escalate && request.escalate.after * 1000 >= expiresInMs)
    problems.push({ field: 'escalate.after', problem: 'must be less than the time until the pause expires' });
  const seen = new Set<string>();
  const everyone: Array<[string, ReviewerRequest]> = [
    ...reviewers.map((r, i) => [`reviewers.${i}.email`, r] as [string, ReviewerRequest]),
    ...(request.escalate?.reviewers ?? []).map(
      (r, i) => [`escalate.reviewers.${i}.email`, r] as [string, ReviewerRequest],
    ),
  ];
  for (const [field, reviewer] of everyone) {
    const email = normaliseEmail(reviewer.email);
    if (seen.has(email)) problems.push({ field, problem: 'is already a reviewer of this pause' });
    seen.add(email);
  }
  return problems;
}

/**
 * Checks the reviewer fields of a new pause and returns its reviewer columns
 * and reviewers' rows (none for a pause without reviewers).
 */
export function planReviewers(
  services: Pick<ServiceContext, 'mailer'>,
  request: ReviewerFields & { notify?: object },
  pause: Pick<PausesTable, 'id' | 'mode' | 'options' | 'expires_at' | 'created_at'>,
): { columns: ReviewerColumns | null; reviewers: ReviewersTable[] } {
  if (request.reviewers === undefined && ONLY_WITH_REVIEWERS.every((field) => request[field] === undefined))
    return { columns: null, reviewers: [] };
  const options = JSON.parse(pause.options) as string[];
  const created = Date.parse(pause.created_at);
  const problems = problemsOf(request, options, Date.parse(pause.expires_at) - created);
  if (problems.length > 0) throw invalidFields(problems);
  if (!request.reviewers) return { columns: null, reviewers: [] };
  if (pause.mode === 'live' && !services.mailer) {
    throw new ApiError(
      'channel_unavailable',
      'Reviewers are emailed their own links, and email is not configured on this server (SMTP_URL, EMAIL_FROM).',
      { channel: 'email' },
    );
  }

  const at = (seconds: number) => isoTime(new Date(created + seconds * 1000));
  const firstReminder = request.remind_every === undefined ? null : at(request.remind_every);
  const escalation: StoredEscalation | null = request.escalate
    ? {
        after: request.escalate.after,
        reviewers: request.escalate.reviewers.map((r) => ({ email: r.email.toLowerCase(), name: r.name ?? null })),
      }
    : null;
  const columns: ReviewerColumns = {
    quorum: request.quorum ?? 1,
    veto: JSON.stringify(request.veto ?? []),
    remind_every: request.remind_every ?? null,
    remind_max: request.remind_every === undefined ? null : (request.remind_max ?? DEFAULT_REMIND_MAX),
    escalate: escalation ? JSON.stringify(escalation) : null,
    remind_at: firstReminder !== null && firstReminder < pause.expires_at ? firstReminder : null,
    reminders_sent: request.remind_every === undefined ? null : 0,
    escalate_at: escalation ? at(escalation.after) : null,
    escalated_at: null,
  };
  const reviewers = request.reviewers.map((r, position) =>
    newReviewer(pause.id, r, position, 'create', pause.created_at),
  );
  return { columns, reviewers };
}

export function newReviewer(
  pauseId: string,
  reviewer: { email: string; name?: string | null },
  position: number,
  addedBy: ReviewersTable['added_by'],
  now: string,
): ReviewersTable {
  return {
    id: newId('rvw'),
    pause_id: pauseId,
    position,
    email: normaliseEmail(reviewer.email),
    name: reviewer.name ?? null,
    added_by: addedBy,
    added_at: now,
    vote_choice: null,
    vote_text: null,
    voted_at: null,
  };
}
