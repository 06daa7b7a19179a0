import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import type { Kysely } from 'kysely';
import Type from 'typebox';
import { isoTime } from '../../domain/clock.js';
import { sha256Hex } from '../../domain/crypto.js';
import { newId } from '../../domain/ids.js';
import { DEFAULT_EXPIRY_SECONDS, DEFAULT_OPTIONS, MAX_EXPIRY_SECONDS, MAX_METADATA_BYTES } from '../../domain/pause.js';
import { billingPeriod, quotaOf } from '../../domain/plans.js';
import { ApiError, invalidField } from '../../errors.js';
import { keyHolderOf } from '../../http/auth.js';
import { errorResponses, Timestamp } from '../../http/schemas.js';
import { getDeveloper } from '../../store/accounts.js';
import { isUniqueViolation } from '../../store/errors.js';
import { findIdempotencyRecord, recordIdempotentResponse } from '../../store/idempotency.js';
import { insertNotifications } from '../../store/notifications.js';
import { announceQueued } from '../../store/outbox.js';
import { insertPause, type Owner } from '../../store/pauses.js';
import type { Database, PausesTable } from '../../store/schema.js';
import { consumeLivePause } from '../../store/usage.js';
import { planNotifications } from './notify.js';
import { PauseObject, type PauseObjectType, presentPause, responseUrl } from './schemas.js';

export const CreatePause = Type.Object(
  {
    title: Type.String({ minLength: 1, maxLength: 200 }),
    body: Type.Optional(Type.String({ maxLength: 10_000, description: 'Plain text details.' })),
    options: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
        minItems: 1,
        maxItems: 10,
        uniqueItems: true,
        description: 'The choices offered; default ["approve","reject"].',
      }),
    ),
    allow_text: Type.Optional(Type.Boolean({ description: 'Offer a free-text box; default false.' })),
    expires_at: Type.Optional(Timestamp),
    expires_in: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_EXPIRY_SECONDS, description: 'Seconds.' })),
    timeout_default: Type.Optional(Type.String({ description: 'One of options; the outcome on timeout.' })),
    metadata: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'Up to 16 KiB as JSON.' })),
    notify: Type.Optional(
      Type.Object(
        {
          email: Type.Optional(
            Type.Array(Type.String({ format: 'email', maxLength: 254 }), { maxItems: 10, uniqueItems: true }),
          ),
          slack_webhook_url: Type.Optional(Type.String({ maxLength: 2048 })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
type CreatePauseBody = Type.Static<typeof CreatePause>;

const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;
const windowStart = (now: Date) => isoTime(new Date(now.getTime() - IDEMPOTENCY_WINDOW_MS));

function resolveExpiry(body: CreatePauseBody, now: Date): string {
  if (body.expires_at !== undefined && body.expires_in !== undefined) {
    throw invalidField('expires_in', 'cannot be given together with expires_at');
  }
  if (body.expires_at === undefined) {
    return isoTime(new Date(now.getTime() + (body.expires_in ?? DEFAULT_EXPIRY_SECONDS) * 1000));
  }
  const at = new Date(body.expires_at);
  const ahead = at.getTime() - now.getTime();
  if (Number.isNaN(ahead) || ahead < 1000 || ahead > MAX_EXPIRY_SECONDS * 1000) {
    throw invalidField('expires_at', 'must be between 1 second and 30 days from now');
  }
  return isoTime(at);
}

function buildRow(owner: Owner, body: CreatePauseBody, now: Date): PausesTable {
  const options = body.options ?? DEFAULT_OPTIONS;
  if (body.timeout_default !== undefined && !options.includes(body.timeout_default)) {
    throw invalidField('timeout_default', 'must be one of the options');
  }
  const metadata = JSON.stringify(body.metadata ?? {});
  if (Buffer.byteLength(metadata) > MAX_METADATA_BYTES)
    throw invalidField('metadata', 'must be at most 16 KiB as JSON');
  const createdAt = isoTime(now);
  return {
    id: newId('pause', now.getTime()),
    developer_id: owner.developerId,
    mode: owner.mode,
    status: 'pending',
    title: body.title,
    body: body.body ?? null,
    options: JSON.stringify(options),
    allow_text: body.allow_text ? 1 : 0,
    expires_at: resolveExpiry(body, now),
    timeout_default: body.timeout_default ?? null,
    metadata,
    notify: body.notify ? JSON.stringify(body.notify) : null,
    response_choice: null,
    response_text: null,
    response_at: null,
    created_at: createdAt,
    updated_at: createdAt,
  };
}

/** JSON with object keys sorted, so the same body always hashes the same. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

export const createPauseRoute: FastifyPluginAsyncTypebox = async (app) => {
  const { store, clock, config, signals } = app.services;

  async function findReplay(owner: Owner, key: string, requestHash: string, now: Date) {
    const prior = await findIdempotencyRecord(store, { ...owner, key, windowStart: windowStart(now) });
    if (!prior) return null;
    if (prior.request_hash !== requestHash) {
      throw new ApiError('idempotency_conflict', 'This Idempotency-Key was used with a different request body.');
    }
    return { status: prior.response_status, body: JSON.parse(prior.response_body) as PauseObjectType };
  }

  /** Answers with the first response to this Idempotency-Key, if it has one; true when it did. */
  async function replayIfUsed(
    reply: FastifyReply,
    owner: Owner,
    key: string | undefined,
    requestHash: string,
    now: Date,
  ): Promise<boolean> {
    const replay = key ? await findReplay(owner, key, requestHash, now) : null;
    if (!replay) return false;
    await reply.code(replay.status).header('idempotent-replayed', 'true').send(replay.body);
    return true;
  }

  app.post(
    '/pause',
    {
      schema: {
        summary: 'Create a pause: a question a human must answer',
        tags: ['pauses'],
        headers: Type.Object({ 'idempotency-key': Type.Optional(Type.String({ minLength: 1, maxLength: 255 })) }),
        body: CreatePause,
        response: { 200: PauseObject, 201: PauseObject, ...errorResponses(400, 401, 402, 409, 429) },
      },
    },
    async (request, reply) => {
      const holder = keyHolderOf(request);
      const owner: Owner = { developerId: holder.developerId, mode: holder.mode };
      const now = clock.now();
      const row = buildRow(owner, request.body, now);

      const idempotencyKey = request.headers['idempotency-key'];
      const requestHash = idempotencyKey ? sha256Hex(canonicalJson(request.body)) : '';
      const replay = () => replayIfUsed(reply, owner, idempotencyKey, requestHash, now);
      if (idempotencyKey && (await replay())) return reply;

      const url = responseUrl(app, row.id);
      const notifications = await planNotifications(app, owner.mode, row, request.body.notify, url);
      const created = presentPause(app, row, notifications, url);
      const write = async (db: Kysely<Database>) => {
        if (owner.mode === 'live') await chargeQuota(db, owner, now);
        await insertPause(store, row, db);
        if (notifications.length > 0) {
          await insertNotifications(store, notifications, db);
          await announceQueued(store, db);
        }
        if (idempotencyKey) {
          const response = { requestHash, responseStatus: 201, responseBody: JSON.stringify(created) };
          const when = { now: isoTime(now), windowStart: windowStart(now) };
          await recordIdempotentResponse(store, { ...owner, key: idempotencyKey, ...response, ...when }, db);
        }
      };
      try {
        await store.write(write);
      } catch (error) {
        // A concurrent request with the same key won; answer as it did.
        if (idempotencyKey && isUniqueViolation(error) && (await replay())) return reply;
        throw error;
      }
      if (notifications.length > 0) signals.queued(); // start sending now
      return reply.code(201).send(created);
    },
  );

  async function chargeQuota(trx: Kysely<Database>, owner: Owner, now: Date) {
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
};
