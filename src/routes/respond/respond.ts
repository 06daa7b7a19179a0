import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { pauseForToken, questionOf, submitAnswer } from '../../actions/answer-pause.js';
import { MAX_TEXT_LENGTH } from '../../domain/pause.js';
import { errorResponses, Timestamp } from '../../http/schemas.js';
import { PauseStatusSchema, ResponseSchema } from '../pauses/schemas.js';

// No length rule here: any token that is not genuine is a 404, whatever its shape.
const TokenParams = Type.Object({ token: Type.String() });

const QuestionSchema = Type.Object({
  title: Type.String(),
  body: Type.Union([Type.String(), Type.Null()]),
  options: Type.Array(Type.String()),
  allow_text: Type.Boolean(),
  expires_at: Timestamp,
  status: PauseStatusSchema,
  response: ResponseSchema,
});

const Answer = Type.Object(
  {
    choice: Type.String({ maxLength: 100 }),
    text: Type.Optional(Type.Union([Type.String({ maxLength: MAX_TEXT_LENGTH }), Type.Null()])),
  },
  { additionalProperties: false },
);

const Answered = Type.Object({
  status: Type.Literal('responded'),
  choice: Type.String(),
  text: Type.Union([Type.String(), Type.Null()]),
  response_at: Timestamp,
});

export const respondRoutes: FastifyPluginAsyncTypebox = async (app) => {
  // Per client address: answering is for people, and guessing tokens is pointless but should also be slow.
  app.addHook('onRequest', async (request) => app.rateLimits.respond.hit(`respond:${request.ip}`));

  app.get(
    '/respond/:token',
    {
      config: { auth: 'none' },
      schema: {
        summary: 'The question behind a response link (for the response page)',
        tags: ['respond'],
        security: [],
        params: TokenParams,
        response: { 200: QuestionSchema, ...errorResponses(404) },
      },
    },
    async (request) => questionOf(await pauseForToken(app.services, request.params.token)),
  );

  app.post(
    '/respond/:token',
    {
      config: { auth: 'none' },
      schema: {
        summary: "Submit the human's answer; emits pause.responded",
        tags: ['respond'],
        security: [],
        params: TokenParams,
        body: Answer,
        response: { 200: Answered, ...errorResponses(400, 404, 409, 410) },
      },
    },
    async (request) => {
      const pause = await pauseForToken(app.services, request.params.token);
      return { status: 'responded' as const, ...(await submitAnswer(app.services, pause, request.body)) };
    },
  );
};
