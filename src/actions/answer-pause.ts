import Type from 'typebox';
import type { ServiceContext } from '../context.js';
import { isoTime } from '../domain/clock.js';
import {
  answerProblem,
  currentOutcome,
  MAX_OPTION_LENGTH,
  MAX_TEXT_LENGTH,
  type Pause,
  type PauseStatus,
  type PauseView,
} from '../domain/pause.js';
import { verifyResponseToken } from '../domain/response-token.js';
import { ApiError, invalidField } from '../errors.js';
import { getPause } from '../store/pauses.js';
import { getReviewer, type OwnVote, ownVote, tallyOf } from '../store/reviewers.js';
import type { ReviewersTable } from '../store/schema.js';
import { castVote, respondToPause } from '../store/transitions.js';

// What the human sees and does, shared by the JSON API (/v1/respond/{token})
// and the HTML page (/r/{token}). Only the question is ever shown: never
// metadata, notify targets or anything about the developer; a reviewer sees
// the vote counts and their own vote, never other reviewers' names or votes.

// A choice longer than any option cannot be one; whether it is one, and
// whether text is accepted, submitAnswer says.
const Choice = Type.String({ maxLength: MAX_OPTION_LENGTH });
const Text = Type.String({ maxLength: MAX_TEXT_LENGTH });

/** An answer as the JSON API takes it (POST /v1/respond/{token}): `text` may be null. */
export const AnswerInput = Type.Object(
  { choice: Choice, text: Type.Optional(Type.Union([Text, Type.Null()])) },
  { additionalProperties: false, examples: [{ choice: 'approve' }] },
);

/** An answer as a form sends it (the response page): text is never null, and other fields are ignored. */
export const AnswerFormInput = Type.Object({ choice: Choice, text: Type.Optional(Text) });

/** Who a response link speaks for: anyone holding the pause's shared link, or one named reviewer. */
export interface Responder {
  pause: Pause;
  reviewer?: ReviewersTable;
}

export interface Question extends PauseView {
  title: string;
  body: string | null;
  options: string[];
  allow_text: boolean;
  expires_at: string;
  /**
   * For a reviewer: how the pause is decided and how many have voted. `veto`
   * (the options one vote decides) is for the page; the JSON API's schema
   * does not list it, so it is not sent there.
   */
  quorum?: { needed: number; reviewers: number; votes_so_far: number; veto: string[] };
  /** For a reviewer: their own vote, once cast. */
  your_vote?: OwnVote | null;
}

const badToken = () => new ApiError('not_found', 'This response link is not valid.');

/**
 * The pause (and reviewer) a token addresses; undefined for any token that
 * is not genuine, and for a pause's shared link once it has reviewers.
 */
export async function findResponder(
  services: Pick<ServiceContext, 'keys' | 'store'>,
  token: string,
): Promise<Responder | undefined> {
  const subject = verifyResponseToken(services.keys.respondToken, token);
  if (!subject) return undefined;
  const { store } = services;
  const { pauseId, reviewerId } = subject;
  if (!reviewerId) {
    const pause = await getPause(store, pauseId);
    return pause && pause.quorum === null ? { pause } : undefined;
  }
  const [pause, reviewer] = await Promise.all([getPause(store, pauseId), getReviewer(store, { pauseId, reviewerId })]);
  return pause && reviewer ? { pause, reviewer } : undefined;
}

/** The pause (and reviewer) a token addresses; any token that is not genuine is a 404. */
export async function responderFor(
  services: Pick<ServiceContext, 'keys' | 'store'>,
  token: string,
): Promise<Responder> {
  const responder = await findResponder(services, token);
  if (!responder) throw badToken();
  return responder;
}

/** The question as the responder may see it. */
export async function questionFor(
  services: Pick<ServiceContext, 'store'>,
  { pause, reviewer }: Responder,
): Promise<Question> {
  const question: Question = {
    title: pause.title,
    body: pause.body,
    options: pause.options,
    allow_text: pause.allowText,
    expires_at: pause.expiresAt,
    ...currentOutcome(pause),
  };
  if (!reviewer) return question;
  const tally = await tallyOf(services.store, pause.id);
  // The outcome's text is the deciding vote's comment: only its author sees it.
  const response =
    question.response && pause.respondedBy !== reviewer.id ? { ...question.response, text: null } : question.response;
  return {
    ...question,
    response,
    quorum: {
      needed: pause.quorum ?? 1,
      reviewers: tally.reviewers,
      votes_so_far: tally.votes,
      veto: pause.veto,
    },
    your_vote: ownVote(reviewer),
  };
}

/** What answering did: the pause's outcome so far, and for a reviewer their vote. */
export interface AnswerResult {
  status: PauseStatus;
  choice: string | null;
  text: string | null;
  response_at: string | null;
  your_vote?: OwnVote;
}

/**
 * Records the answer (or a reviewer's vote) that a response link carries, or
 * says exactly why it cannot be recorded; a token that is not genuine, or
 * that addresses no pause it may answer, is a 404 as for reading the question.
 *
 * Nothing is read before the write: an answer's update itself checks that it
 * fits the question, and a vote reads the pause once, in its transaction.
 * Only when nothing was recorded is the pause read, to say why.
 */
export async function submitAnswer(
  services: Pick<ServiceContext, 'keys' | 'store' | 'clock'>,
  token: string,
  answer: { choice: string; text?: string | null },
): Promise<AnswerResult> {
  const subject = verifyResponseToken(services.keys.respondToken, token);
  if (!subject) throw badToken();
  const { pauseId, reviewerId } = subject;
  const { store, clock } = services;
  const { choice } = answer;
  const text = answer.text === undefined || answer.text === '' ? null : answer.text;
  if (reviewerId) {
    const vote = await castVote(store, { pauseId, reviewerId, choice, text, clock });
    if (vote.kind === 'invalid') throw invalidField(vote.field, vote.problem);
    if (vote.kind !== 'counted') throw refusedVote[vote.kind]();
    const outcome = currentOutcome(vote.pause);
    return {
      status: outcome.status,
      choice: outcome.response?.choice ?? null,
      text: outcome.response?.text ?? null,
      response_at: outcome.response?.response_at ?? null,
      your_vote: { choice: vote.vote.choice, text: vote.vote.text, voted_at: vote.vote.voted_at },
    };
  }
  const now = isoTime(clock.now());
  // Too long a text is not sent to the database at all; the pause read below says what is wrong.
  const responded =
    text !== null && text.length > MAX_TEXT_LENGTH ? null : await respondToPause(store, { pauseId, choice, text, now });
  if (responded) {
    return { status: 'responded', choice, text, response_at: now };
  }
  // Why nothing changed, in the order the checks always had.
  const current = await getPause(store, pauseId);
  if (!current || current.quorum !== null) throw badToken();
  const problem = answerProblem(current, choice, text);
  if (problem) throw invalidField(problem.field, problem.problem);
  if (current.status === 'responded') throw alreadyResponded();
  throw closed();
}

const refusedVote = {
  not_found: () => badToken(),
  already_voted: () => new ApiError('already_voted', 'You have already voted on this question.'),
  already_responded: () => alreadyResponded(),
  closed: () => closed(),
};

const alreadyResponded = () => new ApiError('already_responded', 'This pause has already been answered.');
const closed = () =>
  new ApiError('pause_closed', 'This pause has expired or was cancelled; it no longer takes answers.');
