import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import {
  CreatePauseInput,
  createPause,
  IdempotentReplay,
  MAX_IDEMPOTENCY_KEY_LENGTH,
  newPauseRules,
} from '../../actions/create-pause.js';
import { DEFAULT_EXPIRY_SECONDS } from '../../domain/pause.js';
import { formatSeconds } from '../../domain/units.js';
import { keyHolderOf } from '../../http/auth.js';
import { errorResponses } from '../../http/schemas.js';
import { throwInvalidBody } from '../../http/validation.js';
import type { Owner } from '../../store/pauses.js';
import { PauseObject } from './schemas.js';

export const createPauseRoute: FastifyPluginAsyncTypebox = async (app) => {
  const services = app.services;

  app.post(
    '/pause',
    {
      schema: {
        summary: 'Create a pause',
        description: `Asks a question a human must answer. Give \`expires_in\` or \`expires_at\` (not both; default ${formatSeconds(DEFAULT_EXPIRY_SECONDS)}), and name \`reviewers\` to have only those people decide. With an \`Idempotency-Key\`, sending the same body again returns the first pause.`,
        tags: ['pauses'],
        headers: Type.Object({
          'idempotency-key': Type.Optional(Type.String({ minLength: 1, maxLength: MAX_IDEMPOTENCY_KEY_LENGTH })),
        }),
        body: CreatePauseInput,
        response: { 200: PauseObject, 201: PauseObject, ...errorResponses(400, 401, 402, 409, 429) },
      },
      // A body the schema refuses is also checked against the rules that span
      // fields, so that one 400 names every problem.
      attachValidation: true,
    },
    async (request, reply) => {
      if (request.validationError) throwInvalidBody(request.validationError, request.body, newPauseRules(services));
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
