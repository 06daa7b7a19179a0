import Type from 'typebox';
import type { ServiceContext } from '../context.js';
import { isoTime } from '../domain/clock.js';
import type { Form, JsonObject, OptionStyle } from '../domain/form.js';
import { type PostedFields, valuesFromFields } from '../domain/form-fields.js';
import {
  answerProblems,
  answerValues,
  currentOutcome,
  givenText,
  MAX_OPTION_LENGTH,
  MAX_TEXT_LENGTH,
  type Pause,
  type PauseStatus,
  type PauseView,
  type SlackResponder,
} from '../domain/pause.js';
import type { FieldProblem } from '../domain/problems.js';
import { verifyResponseToken } from '../domain/response-token.js';
import { ApiError, invalidFields } from '../errors.js';
import type { AnswerRules } from '../store/decode.js';
import { getAnswerRules, getPause } from '../store/pauses.js';
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

const Values = Type.Object(
  {},
  {
    additionalProperties: true,
    description:
      "The form's values, for a choice that submits the form; left out, the proposed values stand. Checked against the form's schema.",
  },
);

/** An answer as the JSON API takes it (POST /v1/respond/{token}): `text` and `values` may be null. */
export const AnswerInput = Type.Object(
  {
    choice: Choice,
    text: Type.Optional(Type.Union([Text, Type.Null()])),
    values: Type.Optional(Type.Union([Values, Type.Null()])),
  },
  { additionalProperties: false, examples: [{ choice: 'approve' }] },
);

/** An answer, as any surface hands it to submitAnswer: `values` left out (or null) keeps the proposed ones. */
export interface SubmittedAnswer {
  choice: string;
  text?: string | null;
  /** Checked against the pause's form here, whatever the surface checked already. */
  values?: object | null;
  /** Who answered from Slack buttons (a shared link's answer keeps it; a reviewer is known already). */
  respondedBySlack?: SlackResponder;
}

/**
 * An answer as a page's form sends it (the response page): text is never
 * null; the form's fields (inputs named `values.…`, all text) are read by
 * submitPostedAnswer, and any other field is ignored.
 */
export const AnswerFormInput = Type.Object({ choice: Choice, text: Type.Optional(Text) });

/** An answer as a page's form posts it: the form's fields as text, present only when the page drew the form. */
export interface PostedAnswer {
  choice: string;
  text?: string;
  fields?: PostedFields;
  /** Who answered from Slack (a modal), as SubmittedAnswer has it. */
  respondedBySlack?: SlackResponder;
}

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
  form: Form | null;
  require_text: string[];
  options_style: Record<string, OptionStyle>;
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
    form: pause.form,
    require_text: pause.requireText,
    options_style: pause.optionsStyle,
    expires_at: pause.expiresAt,
    ...currentOutcome(pause),
  };
  if (!reviewer) return question;
  const tally = await tallyOf(services.store, pause.id);
  // The outcome's text and values are the deciding vote's: only its author sees them (nor whether they were edited).
  const response =
    question.response && pause.respondedBy !== reviewer.id
      ? { ...question.response, text: null, values: null, edited: false }
      : question.response;
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
  values: JsonObject | null;
  edited: boolean;
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
 * Only when nothing was recorded is the pause read, to say why. Values are
 * checked against the pause's answer rules, read first unless the caller
 * already read them (`rules`: they never change once the pause is created).
 */
export async function submitAnswer(
  services: Pick<ServiceContext, 'keys' | 'store' | 'clock'>,
  token: string,
  answer: SubmittedAnswer,
  rules?: AnswerRules,
): Promise<AnswerResult> {
  const subject = verifyResponseToken(services.keys.respondToken, token);
  if (!subject) throw badToken();
  const { pauseId, reviewerId } = subject;
  const { store, clock } = services;
  const { choice } = answer;
  const text = givenText(answer.text);
  const values = answer.values ?? undefined;
  if (reviewerId) {
    const vote = await castVote(store, { pauseId, reviewerId, choice, text, values, clock });
    if (vote.kind === 'invalid') throw invalidFields(vote.problems);
    if (vote.kind !== 'counted') throw refusedVote[vote.kind]();
    const outcome = currentOutcome(vote.pause);
    const { reviewer_id: _, email: __, ...yourVote } = vote.vote;
    return {
      status: outcome.status,
      choice: outcome.response?.choice ?? null,
      text: outcome.response?.text ?? null,
      values: outcome.response?.values ?? null,
      edited: outcome.response?.edited ?? false,
      response_at: outcome.response?.response_at ?? null,
      your_vote: yourVote,
    };
  }
  // Values sent are checked against the form, which only the pause holds: it
  // is read first. Without values, nothing is read before the write.
  let recorded: { values: JsonObject | null; edited: boolean } | undefined;
  if (values !== undefined) {
    const current = rules ?? (await getAnswerRules(store, pauseId));
    if (!current || current.quorum !== null) throw badToken();
    const problems = answerProblems(current, { choice, text, values });
    if (problems.length > 0) throw invalidFields(problems);
    recorded = answerValues(current, { choice, values });
  }
  const now = isoTime(clock.now());
  const sent = recorded ? JSON.stringify(recorded.values) : null;
  const edited = recorded?.edited ? 1 : 0;
  // Too long a text is not sent to the database at all; the pause read below says what is wrong.
  const responded =
    text !== null && text.length > MAX_TEXT_LENGTH
      ? null
      : await respondToPause(store, {
          pauseId,
          choice,
          text,
          values: sent,
          edited,
          now,
          respondedBySlack: answer.respondedBySlack ?? null,
        });
  if (responded) {
    const { responseValues, responseEdited } = responded.pause;
    return {
      status: 'responded',
      choice,
      text,
      values: responseValues,
      edited: responseEdited === true,
      response_at: now,
    };
  }
  // Why nothing changed, in the order the checks always had.
  const current = await getPause(store, pauseId);
  if (!current || current.quorum !== null) throw badToken();
  const problems = answerProblems(current, { choice, text, values });
  if (problems.length > 0) throw invalidFields(problems);
  if (current.status === 'responded') throw alreadyResponded();
  throw closed();
}

/**
 * Why the responder can no longer answer, as the write would say it (the
 * pause decided, closed or past its deadline, the reviewer's vote cast);
 * undefined while they can.
 */
function refusalOf({ pause, reviewer }: Responder, now: string): ApiError | undefined {
  if (pause.status === 'responded') return alreadyResponded();
  if (pause.status !== 'pending' || pause.expiresAt <= now) return closed();
  if (reviewer?.voted_at) return refusedVote.already_voted();
  return undefined;
}

/**
 * Records an answer (or a vote) posted by a page that drew the form: for a
 * choice that submits the form, the fields' text becomes the values
 * (valuesFromFields), checked as the API checks them; another choice
 * ignores the fields. An answer that can no longer be taken is refused as
 * such before any field is read; a field that cannot be read is refused
 * with every other problem of the answer, each under `values.<field>` or
 * `text`. The pause is read once, here.
 */
export async function submitPostedAnswer(
  services: Pick<ServiceContext, 'keys' | 'store' | 'clock'>,
  token: string,
  posted: PostedAnswer,
): Promise<AnswerResult> {
  const { choice, text, fields, respondedBySlack } = posted;
  if (fields === undefined) return submitAnswer(services, token, { choice, text, respondedBySlack });
  const responder = await responderFor(services, token);
  const refusal = refusalOf(responder, isoTime(services.clock.now()));
  if (refusal) throw refusal;
  const { pause } = responder;
  const form = pause.form;
  // A choice that does not submit the form is taken without values.
  if (form === null || !form.on.includes(choice))
    return submitAnswer(services, token, { choice, text, respondedBySlack });
  const { values, problems } = valuesFromFields(form.schema, fields, form.values);
  if (problems.length > 0) {
    const unread: FieldProblem[] = problems.map(({ field, problem }) => ({ field: `values.${field}`, problem }));
    const named = (field: string) => unread.some((p) => field === p.field || field.startsWith(`${p.field}.`));
    const others = answerProblems(pause, { choice, text: givenText(text), values }).filter((p) => !named(p.field));
    throw invalidFields([...unread, ...others]);
  }
  return submitAnswer(services, token, { choice, text, values, respondedBySlack }, pause);
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
