import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import {
  type CreatePauseServices,
  createPause,
  IdempotentReplay,
  newPauseProblems,
} from '../../actions/create-pause.js';
import {
  MAX_BODY_LENGTH,
  MAX_EXPIRY_SECONDS,
  MAX_OPTION_LENGTH,
  MAX_OPTIONS,
  MAX_TITLE_LENGTH,
} from '../../domain/pause.js';
import { MAX_REMIND_MAX, MAX_REVIEWERS, MIN_REMIND_EVERY_SECONDS } from '../../domain/votes.js';
import { keyHolderOf } from '../../http/auth.js';
import { errorResponses, Timestamp } from '../../http/schemas.js';
import { type CrossFieldRules, throwInvalidBody } from '../../http/validation.js';
import type { Owner } from '../../store/pauses.js';
import { PauseObject } from './schemas.js';

const Reviewer = Type.Object(
  {
    email: Type.String({ format: 'email', maxLength: 254 }),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  },
  { additionalProperties: false },
);
const Reviewers = (description: string) => Type.Array(Reviewer, { minItems: 1, maxItems: MAX_REVIEWERS, description });

export const CreatePause = Type.Object(
  {
    title: Type.String({ minLength: 1, maxLength: MAX_TITLE_LENGTH }),
    body: Type.Optional(Type.String({ maxLength: MAX_BODY_LENGTH, description: 'Plain text details.' })),
    options: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: MAX_OPTION_LENGTH }), {
        minItems: 1,
        maxItems: MAX_OPTIONS,
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
    reviewers: Type.Optional(
      Reviewers('The people who decide, each emailed their own link; emails unique (any case).'),
    ),
    quorum: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_REVIEWERS,
        description: 'Votes one option needs to decide; 1 … number of reviewers, default 1.',
      }),
    ),
    veto: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: MAX_OPTION_LENGTH }), {
        maxItems: MAX_OPTIONS,
        uniqueItems: true,
        description: 'Options a single vote decides at once, e.g. ["reject"].',
      }),
    ),
    remind_every: Type.Optional(
      Type.Integer({
        minimum: MIN_REMIND_EVERY_SECONDS,
        maximum: MAX_EXPIRY_SECONDS,
        description: 'Seconds between reminders to reviewers who have not voted.',
      }),
    ),
    remind_max: Type.Optional(
      Type.Integer({ minimum: 1, maximum: MAX_REMIND_MAX, description: 'Most reminders per reviewer; default 3.' }),
    ),
    escalate: Type.Optional(
      Type.Object(
        {
          after: Type.Integer({ minimum: 1, maximum: MAX_EXPIRY_SECONDS, description: 'Seconds after creation.' }),
          reviewers: Reviewers('Added, notified and counted towards the quorum if still pending after `after`.'),
        },
        { additionalProperties: false },
      ),
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
    },
  },
);

/** The cross-field rules of a new pause, judged at the service's clock. */
export const crossFieldRules =
  (services: Pick<CreatePauseServices, 'clock'>): CrossFieldRules =>
  (body) =>
    newPauseProblems(body, services.clock.now());

export const createPauseRoute: FastifyPluginAsyncTypebox = async (app) => {
  const services = app.services;

  app.post(
    '/pause',
    {
      schema: {
        summary: 'Create a pause',
        description:
          'Asks a question a human must answer. Give `expires_in` or `expires_at` (not both; default 24 hours), and name `reviewers` to have only those people decide. With an `Idempotency-Key`, sending the same body again returns the first pause.',
        tags: ['pauses'],
        headers: Type.Object({ 'idempotency-key': Type.Optional(Type.String({ minLength: 1, maxLength: 255 })) }),
        body: CreatePause,
        response: { 200: PauseObject, 201: PauseObject, ...errorResponses(400, 401, 402, 409, 429) },
      },
      // A body the schema refuses is also checked against the rules that span
      // fields, so that one 400 names every problem.
      attachValidation: true,
    },
    async (request, reply) => {
      if (request.validationError) throwInvalidBody(request.validationError, request.body, crossFieldRules(services));
      const holder = keyHolderOf(request);
      const owner: Owner = { developerId: holder.developerId, mode: holder.mode };
      const result = await createPause(services, owner, request.body, request.headers['idempotency-key']);
      if (result instanceof IdempotentReplay) {
        // The status first given: a stored create's 201.
        return reply
          .code(result.status as 201)
          .header('idempotent-replayed', 'true')
          .send(result.pause);
      }
      return reply.code(201).send(result);
    },
  );
};
