import type { Kysely } from 'kysely';
import Type from 'typebox';
import type { ServiceContext } from '../context.js';
import { canonicalJson } from '../domain/canonical-json.js';
import { isoTime } from '../domain/clock.js';
import { sha256Hex } from '../domain/crypto.js';
import { MAX_EMAIL_LENGTH, normaliseEmail } from '../domain/email.js';
import {
  formDefinitionProblems,
  formOf,
  MAX_FORM_PROPERTIES,
  MAX_FORM_SCHEMA_BYTES,
  MAX_FORM_VALUES_BYTES,
  type NewForm,
  OPTION_STYLES,
  type OptionStyle,
} from '../domain/form.js';
import { MAX_URL_LENGTH } from '../domain/hosts.js';
import { newId } from '../domain/ids.js';
import {
  DEFAULT_EXPIRY_SECONDS,
  DEFAULT_OPTIONS,
  DELIVERY_CHANNELS,
  MAX_BODY_LENGTH,
  MAX_EXPIRY_SECONDS,
  MAX_METADATA_BYTES,
  MAX_NOTIFY_EMAILS,
  MAX_OPTION_LENGTH,
  MAX_OPTIONS,
  MAX_TITLE_LENGTH,
  MIN_EXPIRY_SECONDS,
  type Pause,
} from '../domain/pause.js';
import { billingPeriod, quotaOf } from '../domain/plans.js';
import { repeatProblem } from '../domain/schema-errors.js';
import { MAX_SLACK_CHANNEL_LENGTH, SLACK_CHANNEL_PATTERN } from '../domain/slack.js';
import { formatBytes, formatSeconds } from '../domain/units.js';
import {
  DEFAULT_REMIND_MAX,
  MAX_REMIND_MAX,
  MAX_REVIEWER_NAME_LENGTH,
  MAX_REVIEWERS,
  MIN_REMIND_EVERY_SECONDS,
} from '../domain/votes.js';
import { ApiError, type FieldProblem, invalidFields } from '../errors.js';
import { getDeveloper } from '../store/accounts.js';
import { isUniqueViolation } from '../store/errors.js';
import { findIdempotencyRecord, recordIdempotentResponse } from '../store/idempotency.js';
import { insertNotifications } from '../store/notifications.js';
import { insertPause, type Owner, withoutReviewers } from '../store/pauses.js';
import { insertReviewers } from '../store/reviewers.js';
import type { Database } from '../store/schema.js';
import { consumeLivePause } from '../store/usage.js';
import { type NotifyRequest, planNotifications, planReviewerEmails } from './plan-notifications.js';
import { planReviewers, type ReviewerFields, reviewerProblems, type Unchecked } from './plan-reviewers.js';
import { type PresentedPause, presentPause, responseUrl } from './present-pause.js';
import { Timestamp } from './schema-types.js';

// Creating a pause: the row, its notifications, the live quota and the
// Idempotency-Key record are written in one transaction. What may be asked is
// CreatePauseInput, each field's shape and length, which every caller checks
// (the API route as its request schema, MCP with the same checker); the rules
// that span fields or need the clock are newPauseProblems, which createPause
// runs itself and the callers also run beside the schema's errors
// (newPauseRules), so that one 400 names every problem; those that need the
// account or the server's set-up (the quota, SMTP, the Slack URL's address)
// are checked as the pause is planned and written.

const Reviewer = Type.Object(
  {
    email: Type.String({ format: 'email', maxLength: MAX_EMAIL_LENGTH }),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_REVIEWER_NAME_LENGTH })),
  },
  { additionalProperties: false },
);
const Reviewers = (description: string) => Type.Array(Reviewer, { minItems: 1, maxItems: MAX_REVIEWERS, description });
const Option = Type.String({ minLength: 1, maxLength: MAX_OPTION_LENGTH });
/** A number of seconds, at most the longest a pause may live. */
const Seconds = (minimum: number, description: string) =>
  Type.Integer({ minimum, maximum: MAX_EXPIRY_SECONDS, description });

/** A new pause as a caller may ask for it; docs/concepts.md, "Pauses", describes each field. */
export const CreatePauseInput = Type.Object(
  {
    title: Type.String({ minLength: 1, maxLength: MAX_TITLE_LENGTH }),
    body: Type.Optional(Type.String({ maxLength: MAX_BODY_LENGTH, description: 'Plain text details.' })),
    options: Type.Optional(
      Type.Array(Option, {
        minItems: 1,
        maxItems: MAX_OPTIONS,
        uniqueItems: true,
        description: `The choices offered; default ${JSON.stringify(DEFAULT_OPTIONS)}.`,
      }),
    ),
    allow_text: Type.Optional(Type.Boolean({ description: 'Offer a free-text box; default false.' })),
    expires_at: Type.Optional(Timestamp),
    expires_in: Type.Optional(Seconds(MIN_EXPIRY_SECONDS, 'Seconds.')),
    timeout_default: Type.Optional(Type.String({ description: 'One of options; the outcome on timeout.' })),
    metadata: Type.Optional(
      Type.Object({}, { additionalProperties: true, description: `Up to ${formatBytes(MAX_METADATA_BYTES)} as JSON.` }),
    ),
    notify: Type.Optional(
      Type.Object(
        {
          email: Type.Optional(
            Type.Array(Type.String({ format: 'email', maxLength: MAX_EMAIL_LENGTH }), {
              maxItems: MAX_NOTIFY_EMAILS,
              uniqueItems: true,
            }),
          ),
          slack_webhook_url: Type.Optional(Type.String({ maxLength: MAX_URL_LENGTH })),
          slack: Type.Optional(
            Type.Object(
              {
                channel: Type.String({
                  pattern: SLACK_CHANNEL_PATTERN,
                  maxLength: MAX_SLACK_CHANNEL_LENGTH,
                  description: 'A Slack channel id (`C…`) the Slack app posts the question to, one button per option.',
                }),
              },
              { additionalProperties: false },
            ),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    reviewers: Type.Optional(
      Reviewers('The people who decide, each emailed their own link; emails unique (any case).'),
    ),
    deliver: Type.Optional(
      Type.Array(Type.Union(DELIVERY_CHANNELS.map((channel) => Type.Literal(channel))), {
        minItems: 1,
        maxItems: DELIVERY_CHANNELS.length,
        uniqueItems: true,
        description:
          'How reviewers are sent the question: `["email"]` (the default), `["slack"]` (a direct message with their own buttons, found by email; email for a reviewer Slack does not know) or both.',
      }),
    ),
    quorum: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_REVIEWERS,
        description: 'Votes one option needs to decide; 1 … number of reviewers, default 1.',
      }),
    ),
    veto: Type.Optional(
      Type.Array(Option, {
        maxItems: MAX_OPTIONS,
        uniqueItems: true,
        description: 'Options a single vote decides at once, e.g. ["reject"].',
      }),
    ),
    remind_every: Type.Optional(
      Seconds(MIN_REMIND_EVERY_SECONDS, 'Seconds between reminders to reviewers who have not voted.'),
    ),
    remind_max: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_REMIND_MAX,
        description: `Most reminders per reviewer; default ${DEFAULT_REMIND_MAX}.`,
      }),
    ),
    escalate: Type.Optional(
      Type.Object(
        {
          after: Seconds(1, 'Seconds after creation.'),
          reviewers: Reviewers('Added, notified and counted towards the quorum if still pending after `after`.'),
        },
        { additionalProperties: false },
      ),
    ),
    form: Type.Optional(
      Type.Object(
        {
          schema: Type.Object(
            {},
            {
              additionalProperties: true,
              description: `A JSON Schema (draft 2020-12) of \`type: "object"\`: at most ${MAX_FORM_PROPERTIES} properties, ${formatBytes(MAX_FORM_SCHEMA_BYTES)} as JSON.`,
            },
          ),
          values: Type.Optional(
            Type.Object(
              {},
              {
                additionalProperties: true,
                description: `The proposed answer, shown prefilled; must meet the schema; at most ${formatBytes(MAX_FORM_VALUES_BYTES)} as JSON. Left out, the form's inputs start empty, and an answer that submits the form must send values (\`edited\` is then true).`,
              },
            ),
          ),
          on: Type.Optional(
            Type.Array(Option, {
              minItems: 1,
              maxItems: MAX_OPTIONS,
              uniqueItems: true,
              description: 'The options that submit the form; default every option.',
            }),
          ),
        },
        {
          additionalProperties: false,
          description: 'A form the human fills in: the answer carries its `values`.',
        },
      ),
    ),
    require_text: Type.Optional(
      Type.Array(Option, {
        maxItems: MAX_OPTIONS,
        uniqueItems: true,
        description: 'Options that need a written reason, e.g. ["reject"]; implies `allow_text`.',
      }),
    ),
    options_style: Type.Optional(
      Type.Record(Option, Type.Union(OPTION_STYLES.map((style) => Type.Literal(style))), {
        maxProperties: MAX_OPTIONS,
        description:
          'How an option is shown, e.g. {"reject": "danger"}; options not named look alike, none styled as the one to press.',
      }),
    ),
  },
  {
    additionalProperties: false,
    // Named examples for the API reference (/docs); a test posts each one to the service.
    'x-examples': {
      deploy: {
        summary: 'A yes/no question that rejects on timeout',
        value: {
          title: 'Deploy v2.4.1 to production?',
          body: '14 commits, 2 migrations',
          options: ['approve', 'reject'],
          allow_text: true,
          expires_in: 1800,
          timeout_default: 'reject',
          metadata: { pipeline: 4711 },
        },
      },
      reviewers: {
        summary: 'Named reviewers, two of whom must agree',
        value: {
          title: 'Refund $1,250 to order 8812?',
          reviewers: [
            { email: 'ann@example.com', name: 'Ann' },
            { email: 'bob@example.com' },
            { email: 'cy@example.com' },
          ],
          quorum: 2,
          veto: ['reject'],
          remind_every: 3600,
          expires_in: 86400,
          timeout_default: 'reject',
        },
      },
      form: {
        summary: 'A form the human may edit before approving',
        value: {
          title: 'Refund order 8812?',
          options: ['approve', 'reject'],
          form: {
            schema: {
              type: 'object',
              properties: {
                amount: { type: 'number', minimum: 0, maximum: 5000, title: 'Amount (USD)' },
                note: { type: 'string', maxLength: 500, title: 'Note to the customer', 'x-multiline': true },
              },
              required: ['amount'],
            },
            values: { amount: 1250 },
            on: ['approve'],
          },
          require_text: ['reject'],
          options_style: { reject: 'danger' },
        },
      },
    },
  },
);

/** The longest Idempotency-Key a create may carry. */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

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
  form?: NewForm;
  require_text?: string[];
  options_style?: Record<string, OptionStyle>;
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
  'store' | 'clock' | 'config' | 'mailer' | 'slack' | 'keys' | 'publicBaseUrl'
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
  const { store, clock } = services;
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
  const allowed = services.config.slack?.allowedDevelopers;
  const usesSlackApp =
    owner.mode === 'live' &&
    allowed !== undefined &&
    (request.notify?.slack !== undefined || row.deliver?.includes('slack'));
  // Emails name who asks; the account is read only when one is sent, or the Slack app is for some accounts only.
  const askedBy =
    reviewers.length > 0 || (request.notify?.email?.length ?? 0) > 0 || usesSlackApp
      ? ((await getDeveloper(store, owner.developerId))?.email ?? '')
      : '';
  if (usesSlackApp && !allowed.includes(normaliseEmail(askedBy))) {
    throw new ApiError(
      'channel_unavailable',
      'The Slack app on this server is for some accounts only (SLACK_ALLOWED_DEVELOPERS), and this one is not among them; use notify.slack_webhook_url or share response_url yourself.',
      { channel: 'slack' },
    );
  }
  // Without `notify` or reviewers there is nothing to plan or check: no call, no await.
  const notifications = request.notify
    ? await planNotifications(services, owner.mode, row, request.notify, url ?? '', askedBy)
    : planReviewerEmails(services, row, reviewers, {
        kind: 'question',
        reviewerCount: reviewers.length,
        now: row.createdAt,
        askedBy,
        deliver: row.deliver ?? undefined,
      });
  const created = presentPause(services, row, { notifications, reviewers, url });
  const write = async (db: Kysely<Database>) => {
    if (owner.mode === 'live') await chargeQuota(services, db, owner, now);
    await insertPause(store, row, db);
    if (reviewers.length > 0) await insertReviewers(store, reviewers, db);
    await insertNotifications(store, notifications, db); // wakes the senders once this commits
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

/** newPauseProblems at the service's clock: the rules a caller runs beside CreatePauseInput's errors. */
export const newPauseRules =
  (services: Pick<CreatePauseServices, 'clock'>) =>
  (request: Unchecked<NewPause>): FieldProblem[] =>
    newPauseProblems(request, services.clock.now());

const EXPIRES_AT_PROBLEM = `must be between ${formatSeconds(MIN_EXPIRY_SECONDS)} and ${formatSeconds(MAX_EXPIRY_SECONDS)} from now`;

/**
 * Every problem of a new pause that spans fields or needs the clock: those of
 * its reviewer fields too, so one 400 names them all. Callers also run it on a
 * body CreatePauseInput refused, to list these beside the schema's errors: a
 * rule whose fields are not of their type is left to the schema.
 */
export function newPauseProblems(request: Unchecked<NewPause>, now: Date): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const { expires_at: expiresAt, expires_in: expiresIn, timeout_default: timeoutDefault } = request;
  let expiresInMs = DEFAULT_EXPIRY_SECONDS * 1000;
  if (expiresAt !== undefined && expiresIn !== undefined) {
    problems.push({ field: 'expires_in', problem: 'cannot be given together with expires_at' });
  } else if (typeof expiresAt === 'string') {
    expiresInMs = Date.parse(expiresAt) - now.getTime();
    if (
      Number.isNaN(expiresInMs) ||
      expiresInMs < MIN_EXPIRY_SECONDS * 1000 ||
      expiresInMs > MAX_EXPIRY_SECONDS * 1000
    ) {
      problems.push({ field: 'expires_at', problem: EXPIRES_AT_PROBLEM });
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
      problems.push({ field: 'metadata', problem: `must be at most ${formatBytes(MAX_METADATA_BYTES)} as JSON` });
    }
  }
  const optionList = Array.isArray(options) ? options.filter((o): o is string => typeof o === 'string') : [];
  problems.push(...reviewerProblems(request, optionList, expiresInMs));
  problems.push(...typedAnswerProblems(request, optionList));
  // Ajv's uniqueItems keys an object by each string, which misses a repeated "__proto__".
  const form = request.form as { on?: unknown } | undefined;
  for (const [field, list] of [
    ['options', request.options],
    ['veto', request.veto],
    ['require_text', request.require_text],
    ['form.on', typeof form === 'object' && form !== null ? form.on : undefined],
  ] as const) {
    const repeat = repeatedItem(field, list);
    if (repeat && !problems.some((problem) => problem.field === field)) problems.push(repeat);
  }
  return problems;
}

/** The problem of a list of strings that holds one twice, naming its first repeat; undefined for none. */
function repeatedItem(field: string, list: unknown): FieldProblem | undefined {
  if (!Array.isArray(list)) return undefined;
  const repeated = list.findIndex((item, index) => typeof item === 'string' && list.indexOf(item) !== index);
  if (repeated === -1) return undefined;
  return { field, problem: repeatProblem(field, list.indexOf(list[repeated]), repeated) };
}

/** The problems of a pause's form, required reasons and option styles: each names an option, or the form's parts. */
function typedAnswerProblems(request: Unchecked<NewPause>, options: string[]): FieldProblem[] {
  const problems = formDefinitionProblems(request.form, options);
  const { require_text: requireText, options_style: style } = request;
  if (Array.isArray(requireText)) {
    requireText.forEach((option, index) => {
      if (typeof option === 'string' && !options.includes(option))
        problems.push({ field: `require_text.${index}`, problem: 'must be one of the options' });
    });
    if (requireText.length > 0 && request.allow_text === false)
      problems.push({ field: 'allow_text', problem: 'cannot be false when require_text names an option' });
  }
  if (typeof style === 'object' && style !== null) {
    for (const option of Object.keys(style)) {
      if (!options.includes(option))
        problems.push({ field: `options_style.${option}`, problem: 'must name one of the options' });
    }
  }
  return problems;
}

function buildRow(owner: Owner, request: NewPause, now: Date): Pause {
  const options = request.options ?? [...DEFAULT_OPTIONS]; // a pause's own array, never the shared default
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
    allowText: Boolean(request.allow_text) || (request.require_text?.length ?? 0) > 0,
    expiresAt: isoTime(new Date(expiresAt)),
    timeoutDefault: request.timeout_default ?? null,
    metadata: (request.metadata ?? {}) as Record<string, unknown>,
    notify: request.notify ?? null,
    responseChoice: null,
    responseText: null,
    responseAt: null,
    createdAt: createdAt,
    updatedAt: createdAt,
    ...withoutReviewers(),
    form: request.form ? formOf(request.form, options) : null,
    requireText: request.require_text ?? [],
    optionsStyle: request.options_style ?? {},
    responseValues: null,
    responseEdited: null,
  };
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
