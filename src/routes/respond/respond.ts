import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { AnswerInput, questionFor, responderFor, submitAnswer } from '../../actions/answer-pause.js';
import { limitByAddress } from '../../http/rate-limit.js';
import { errorResponses, Timestamp } from '../../http/schemas.js';
import {
  AnswerValuesFields,
  OwnVoteSchema,
  PauseStatusSchema,
  ResponseSchema,
  TypedAnswerFields,
} from '../pauses/schemas.js';

// No length rule here: any token that is not genuine is a 404, whatever its shape.
const TokenParams = Type.Object({ token: Type.String() });

const QuestionSchema = Type.Object({
  title: Type.String(),
  body: Type.Union([Type.String(), Type.Null()]),
  options: Type.Array(Type.String()),
  allow_text: Type.Boolean(),
  ...TypedAnswerFields,
  expires_at: Timestamp,
  status: PauseStatusSchema,
  response: ResponseSchema,
  quorum: Type.Optional(
    Type.Object(
      { needed: Type.Integer(), reviewers: Type.Integer(), votes_so_far: Type.Integer() },
      { description: 'For a reviewer: votes one option needs, how many reviewers, how many have voted.' },
    ),
  ),
  your_vote: Type.Optional(OwnVoteSchema),
});

const Answered = Type.Object({
  status: PauseStatusSchema,
  choice: Type.Union([Type.String(), Type.Null()], { description: "The outcome's choice; null while undecided." }),
  text: Type.Union([Type.String(), Type.Null()]),
  ...AnswerValuesFields,
  response_at: Type.Union([Timestamp, Type.Null()]),
  your_vote: Type.Optional(Type.Exclude(OwnVoteSchema, Type.Null())),
});

export const respondRoutes: FastifyPluginAsyncTypebox = async (app) => {
  // Per client address: answering is for people, and guessing tokens is pointless but should also be slow.
  app.addHook('onRequest', limitByAddress(app.rateLimits.respond, 'respond'));

  app.get(
    '/respond/:token',
    {
      config: { auth: 'none' },
      schema: {
        summary: 'Read a question by its link',
        description:
          'The question behind a response link, as the response page shows it. Needs no key: the token is the key.',
        tags: ['respond'],
        security: [],
        params: TokenParams,
        response: { 200: QuestionSchema, ...errorResponses(404) },
      },
    },
    async (request) => questionFor(app.services, await responderFor(app.services, request.params.token)),
  );

  app.post(
    '/respond/:token',
    {
      config: { auth: 'none' },
      schema: {
        summary: 'Answer a question',
        description:
          'Submits the human’s answer, or a reviewer’s vote, through a response link; emits `pause.voted` and `pause.responded`.',
        tags: ['respond'],
        security: [],
        params: TokenParams,
        body: AnswerInput,
        response: { 200: Answered, ...errorResponses(400, 404, 409, 410) },
      },
    },
    async (request) => submitAnswer(app.services, request.params.token, request.body),
  );
};
