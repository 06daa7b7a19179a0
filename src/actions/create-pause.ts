import type { Kysely } from 'kysely';
import type { ServiceContext } from '../context.js';
import { isoTime } from '../domain/clock.js';
import { sha256Hex } from '../domain/crypto.js';
import { newId } from '../domain/ids.js';
import {
  DEFAULT_EXPIRY_SECONDS,
  DEFAULT_OPTIONS,
  MAX_EXPIRY_SECONDS,
  MAX_METADATA_BYTES,
  type Pause,
} from '../domain/pause.js';
import { billingPeriod, quotaOf } from '../domain/plans.js';
import { ApiError, type FieldProblem, invalidFields } from '../errors.js';
import { getDeveloper } from '../store/accounts.js';
import { isUniqueViolation } from '../store/errors.js';
import { findIdempotencyRecord, recordIdempotentResponse } from '../store/idempotency.js';
import { insertNotifications } from '../store/notifications.js';
import { announceQueued } from '../store/outbox.js';
import { insertPause, type Owner, WITHOUT_REVIEWERS } from '../store/pauses.js';
import { insertReviewers } from '../store/reviewers.js';
import type { Database } from '../store/schema.js';
import { consumeLivePause } from '../store/usage.js';
import { type NotifyRequest, planNotifications, planReviewerEmails } from './plan-notifications.js';
import { planReviewers, type ReviewerFields, reviewerProblems, type Unchecked } from './plan-reviewers.js';
import { type PresentedPause, presentPause, responseUrl } from './present-pause.js';

// Creating a pause: the row, its notifications, the live quota and the
// Idempotency-Key record are written in one transaction. Field shapes and
// lengths are checked by the caller (the API's request schema); the rules
// that span fields, and those that need the clock or the account, are here
// (newPauseProblems, which the API also runs beside its schema's errors).

/** What a developer asks for; docs/concepts.md, "Pauses", describes each field. */
export interface NewPause extends ReviewerFields {
  title: string;
  body?: string;
  options?: string[];
  allow_text?: boolean;
  expires_at?: string;
  expires_in?: number;
  timeout_default?: string;
  metadata?: object;
  notify?: NotifyRequest;
}

/** The first answer to an Idempotency-Key, given again to a request that repeats it. */
export class IdempotentReplay {
  constructor(
    readonly status: number,
    readonly pause: PresentedPause,
  ) {}
}

export type CreatePauseServices = Pick<
  ServiceContext,
  'store' | 'clock' | 'config' | 'signals' | 'mailer' | 'keys' | 'publicBaseUrl'
>;

const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;
const windowStart = (now: Date) => isoTime(new Date(now.getTime() - IDEMPOTENCY_WINDOW_MS));

/**
 * Creates the pause and returns it as the API shows it; or, when
 * `idempotencyKey` was used before with the same request, the first answer.
 */
export async function createPause(
  services: CreatePauseServices,
  owner: Owner,
  request: NewPause,
  idempotencyKey: string | undefined,
): Promise<PresentedPause | IdempotentReplay> {
  const { store, clock, signals } = services;
  const now = clock.now();
  const problems = newPauseProblems(request, now);
  if (problems.length > 0) throw invalidFields(problems);
  const plain = buildRow(owner, request, now);
  const { columns, reviewers } = planReviewers(services, request, plain);
  const row: Pause = columns ? { ...plain, ...columns } : plain;

  const requestHash = idempotencyKey ? sha256Hex(canonicalJson(request)) : '';
  const replay = () => findReplay(services, owner, idempotencyKey!, requestHash, now);
  if (idempotencyKey) {
    const replayed = await replay();
    if (replayed) return replayed;
  }

  // A pause with reviewers has no shared link: each reviewer is sent their own.
  const url = reviewers.length > 0 ? null : responseUrl(services, row.id);
  // Emails name who asks; the account is read only when one is sent.
  const askedBy =
    reviewers.length > 0 || (request.notify?.email?.length ?? 0) > 0
      ? ((await getDeveloper(store, owner.developerId))?.email ?? '')
      : '';
  // Without `notify` or reviewers there is nothing to plan or check: no call, no await.
  const notifications = request.notify
    ? await planNotifications(services, owner.mode, row, request.notify, url ?? '', askedBy)
    : planReviewerEmails(services, row, reviewers, {
        kind: 'question',
        reviewerCount: reviewers.length,
        now: row.createdAt,
        askedBy,
      });
  const created = presentPause(services, row, { notifications, reviewers, url });
  const write = async (db: Kysely<Database>) => {
    if (owner.mode === 'live') await chargeQuota(services, db, owner, now);
    await insertPause(store, row, db);
    if (reviewers.length > 0) await insertReviewers(store, reviewers, db);
    if (notifications.length > 0) {
      await insertNotifications(store, notifications, db);
      await announceQueued(store, db);
    }
    if (idempotencyKey) {
      const response = { requestHash, responseStatus: 201, responseBody: created };
      const when = { now: isoTime(now), windowStart: windowStart(now) };
      await recordIdempotentResponse(store, { ...owner, key: idempotencyKey, ...response, ...when }, db);
    }
  };
  try {
    await store.write(write);
  } catch (error) {
    // A concurrent request with the same key won; answer as it did.
    if (idempotencyKey && isUniqueViolation(error)) {
      const replayed = await replay();
      if (replayed) return replayed;
    }
    throw error;
  }
  if (notifications.length > 0) signals.queued(); // start sending now
  return created;
}

async function findReplay(
  { store }: Pick<ServiceContext, 'store'>,
  owner: Owner,
  key: string,
  requestHash: string,
  now: Date,
): Promise<IdempotentReplay | null> {
  const prior = await findIdempotencyRecord(store, { ...owner, key, windowStart: windowStart(now) });
  if (!prior) return null;
  if (prior.requestHash !== requestHash) {
    throw new ApiError('idempotency_conflict', 'This Idempotency-Key was used with a different request body.');
  }
  return new IdempotentReplay(prior.responseStatus, prior.responseBody as PresentedPause);
}

/**
 * Every problem of a new pause that spans fields or needs the clock: those of
 * its reviewer fields too, so one 400 names them all. The API also runs it on a
 * body its schema refused, to list these beside the schema's errors: a rule
 * whose fields are not of their type is left to the schema.
 */
export function newPauseProblems(request: Unchecked<NewPause>, now: Date): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const { expires_at: expiresAt, expires_in: expiresIn, timeout_default: timeoutDefault } = request;
  let expiresInMs = DEFAULT_EXPIRY_SECONDS * 1000;
  if (expiresAt !== undefined && expiresIn !== undefined) {
    problems.push({ field: 'expires_in', problem: 'cannot be given together with expires_at' });
  } else if (typeof expiresAt === 'string') {
    expiresInMs = Date.parse(expiresAt) - now.getTime();
    if (Number.isNaN(expiresInMs) || expiresInMs < 1000 || expiresInMs > MAX_EXPIRY_SECONDS * 1000) {
      problems.push({ field: 'expires_at', problem: 'must be between 1 second and 30 days from now' });
    }
  } else if (typeof expiresIn === 'number') {
    expiresInMs = expiresIn * 1000;
  }
  const options = request.options === undefined ? DEFAULT_OPTIONS : request.options;
  if (typeof timeoutDefault === 'string' && Array.isArray(options) && !options.includes(timeoutDefault)) {
    problems.push({ field: 'timeout_default', problem: 'must be one of the options' });
  }
  if (typeof request.metadata === 'object' && request.metadata !== null) {
    if (Buffer.byteLength(JSON.stringify(request.metadata)) > MAX_METADATA_BYTES) {
      problems.push({ field: 'metadata', problem: 'must be at most 16 KiB as JSON' });
    }
  }
  const optionList = Array.isArray(options) ? options.filter((o): o is string => typeof o === 'string') : [];
  problems.push(...reviewerProblems(request, optionList, expiresInMs));
  return problems;
}

function buildRow(owner: Owner, request: NewPause, now: Date): Pause {
  const options = request.options ?? DEFAULT_OPTIONS;
  const createdAt = isoTime(now);
  const expiresAt =
    request.expires_at ?? new Date(now.getTime() + (request.expires_in ?? DEFAULT_EXPIRY_SECONDS) * 1000);
  return {
    id: newId('pause', now.getTime()),
    developerId: owner.developerId,
    mode: owner.mode,
    status: 'pending',
    title: request.title,
    body: request.body ?? null,
    options,
    allowText: Boolean(request.allow_text),
    expiresAt: isoTime(new Date(expiresAt)),
    timeoutDefault: request.timeout_default ?? null,
    metadata: (request.metadata ?? {}) as Record<string, unknown>,
    notify: request.notify ?? null,
    responseChoice: null,
    responseText: null,
    responseAt: null,
    createdAt: createdAt,
    updatedAt: createdAt,
    ...WITHOUT_REVIEWERS,
  };
}

/** JSON with object keys sorted, so the same request always hashes the same. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

async function chargeQuota(
  { store, config }: Pick<ServiceContext, 'store' | 'config'>,
  trx: Kysely<Database>,
  owner: Owner,
  now: Date,
) {
  const developer = await getDeveloper(store, owner.developerId, trx);
  const quota = quotaOf(config.planQuotas, developer?.plan ?? 'free');
  if (await consumeLivePause(store, { developerId: owner.developerId, quota, now }, trx)) return;
  const resetsAt = billingPeriod(now).end;
  throw new ApiError(
    'quota_exceeded',
    `Your plan allows ${quota} live pauses a month; the quota resets at ${resetsAt}. Test keys are not counted.`,
    { quota, resets_at: resetsAt },
  );
}
