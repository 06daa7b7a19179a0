import type { ServiceContext } from '../context.js';
import { isoTime } from '../domain/clock.js';
import { normaliseEmail } from '../domain/email.js';
import { newId } from '../domain/ids.js';
import type { DeliveryChannel, Escalation, Pause, PauseReviewerFields } from '../domain/pause.js';
import { DEFAULT_REMIND_MAX } from '../domain/votes.js';
import { ApiError, type FieldProblem } from '../errors.js';
import type { ReviewersTable } from '../store/schema.js';

// The reviewer fields of a new pause: the rules that span fields (the schema
// checks each field's shape), the reviewers' rows and the pause's columns for
// quorum, veto, reminders and escalation.

export interface ReviewerRequest {
  email: string;
  name?: string;
}

export interface ReviewerFields {
  reviewers?: ReviewerRequest[];
  /** Default `["email"]`. */
  deliver?: DeliveryChannel[];
  quorum?: number;
  veto?: string[];
  remind_every?: number;
  remind_max?: number;
  escalate?: { after: number; reviewers: ReviewerRequest[] };
}

const ONLY_WITH_REVIEWERS = ['quorum', 'veto', 'remind_every', 'remind_max', 'escalate', 'deliver'] as const;

/** A request's fields as they arrived, perhaps of the wrong type (the schema may have refused them). */
export type Unchecked<T> = { [K in keyof T]?: unknown };

const isArray = (value: unknown): value is unknown[] => Array.isArray(value);
const emailOf = (reviewer: unknown) =>
  typeof reviewer === 'object' && reviewer !== null && typeof (reviewer as ReviewerRequest).email === 'string'
    ? (reviewer as ReviewerRequest).email
    : undefined;

/**
 * Every cross-field problem of the reviewer fields, so one 400 names them all.
 * The fields may be malformed (this also runs beside the schema's errors): a
 * rule whose fields are not of their type is left to the schema.
 */
export function reviewerProblems(
  request: Unchecked<ReviewerFields & { notify: object }>,
  options: string[],
  expiresInMs: number,
): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const reviewers = request.reviewers;
  if (reviewers === undefined) {
    for (const field of ONLY_WITH_REVIEWERS)
      if (request[field] !== undefined) problems.push({ field, problem: 'needs reviewers' });
    return problems;
  }
  if (request.notify !== undefined)
    problems.push({
      field: 'notify',
      problem: 'cannot be combined with reviewers: each reviewer is emailed their own link',
    });
  if (isArray(reviewers) && typeof request.quorum === 'number' && request.quorum > reviewers.length)
    problems.push({ field: 'quorum', problem: `must be at most the number of reviewers (${reviewers.length})` });
  if (isArray(request.veto))
    request.veto.forEach((option, index) => {
      if (typeof option === 'string' && !options.includes(option))
        problems.push({ field: `veto.${index}`, problem: 'must be one of the options' });
    });
  if (request.remind_max !== undefined && request.remind_every === undefined)
    problems.push({ field: 'remind_max', problem: 'needs remind_every' });
  const escalate = request.escalate as Unchecked<ReviewerFields['escalate'] & object> | undefined;
  if (typeof escalate?.after === 'number' && escalate.after * 1000 >= expiresInMs)
    problems.push({ field: 'escalate.after', problem: 'must be less than the time until the pause expires' });
  const seen = new Set<string>();
  const everyone: Array<[string, unknown]> = [
    ...(isArray(reviewers) ? reviewers : []).map((r, i) => [`reviewers.${i}.email`, r] as [string, unknown]),
    ...(isArray(escalate?.reviewers) ? escalate.reviewers : []).map(
      (r, i) => [`escalate.reviewers.${i}.email`, r] as [string, unknown],
    ),
  ];
  for (const [field, reviewer] of everyone) {
    const given = emailOf(reviewer);
    if (given === undefined) continue;
    const email = normaliseEmail(given);
    if (seen.has(email)) problems.push({ field, problem: 'is already a reviewer of this pause' });
    seen.add(email);
  }
  return problems;
}

/**
 * The reviewer columns and reviewers' rows of a new pause (none for a pause
 * without reviewers), whose fields reviewerProblems found nothing wrong with.
 */
export function planReviewers(
  services: Pick<ServiceContext, 'mailer' | 'slack'>,
  request: ReviewerFields & { notify?: object },
  pause: Pick<Pause, 'id' | 'mode' | 'expiresAt' | 'createdAt'>,
): { columns: Omit<PauseReviewerFields, 'respondedBy'> | null; reviewers: ReviewersTable[] } {
  if (request.reviewers === undefined && ONLY_WITH_REVIEWERS.every((field) => request[field] === undefined))
    return { columns: null, reviewers: [] };
  const created = Date.parse(pause.createdAt);
  if (!request.reviewers) return { columns: null, reviewers: [] };
  const deliver = request.deliver ?? ['email'];
  if (pause.mode === 'live' && deliver.includes('email') && !services.mailer) {
    throw new ApiError(
      'channel_unavailable',
      'Reviewers are emailed their own links, and email is not configured on this server (SMTP_URL, EMAIL_FROM).',
      { channel: 'email' },
    );
  }
  if (pause.mode === 'live' && deliver.includes('slack') && !services.slack) {
    throw new ApiError(
      'channel_unavailable',
      'Reviewers are sent the question in Slack, and the Slack app is not configured on this server (SLACK_BOT_TOKEN).',
      { channel: 'slack' },
    );
  }

  const at = (seconds: number) => isoTime(new Date(created + seconds * 1000));
  const firstReminder = request.remind_every === undefined ? null : at(request.remind_every);
  const escalation: Escalation | null = request.escalate
    ? {
        after: request.escalate.after,
        reviewers: request.escalate.reviewers.map((r) => ({ email: r.email.toLowerCase(), name: r.name ?? null })),
      }
    : null;
  const columns = {
    quorum: request.quorum ?? 1,
    veto: request.veto ?? [],
    remindEvery: request.remind_every ?? null,
    remindMax: request.remind_every === undefined ? null : (request.remind_max ?? DEFAULT_REMIND_MAX),
    escalation,
    deliver: request.deliver ?? null,
    remindAt: firstReminder !== null && firstReminder < pause.expiresAt ? firstReminder : null,
    remindersSent: request.remind_every === undefined ? null : 0,
    escalateAt: escalation ? at(escalation.after) : null,
    escalatedAt: null,
  };
  const reviewers = request.reviewers.map((r, position) =>
    newReviewer(pause.id, r, position, 'create', pause.createdAt),
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
    vote_values: null,
  };
}
