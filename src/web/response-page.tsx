import type { Child } from '@pausepoint/jsx';
import type { Question } from '../actions/answer-pause.js';
import { styleOf } from '../domain/form.js';
import { MAX_TEXT_LENGTH } from '../domain/pause.js';
import { formatTimeLeft } from '../domain/time-format.js';
import type { ApiError } from '../errors.js';
import { documentOf } from '../html.js';
import { FormInputs, ProblemSummary, type Refused, textId } from './form-inputs.js';
import { Time } from './layout.js';

// The response page, rendered on the server: the question is readable and
// answerable without JavaScript. JSX escapes every value from the developer.
// A named reviewer's page (the question has `quorum`) also shows how the
// question is decided, in counts only, and their own vote: never another
// reviewer's name, vote or comment.

function ResponseDocument({ title, children }: { title: string; children?: Child }) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="robots" content="noindex, nofollow" />
        <title>{title}</title>
        <link rel="stylesheet" href="/assets/page.css" />
      </head>
      <body>
        <main>
          {children}
          <footer>Sent with pausepoint</footer>
        </main>
        <script src="/assets/page.js" defer></script>
      </body>
    </html>
  );
}

/** The page's wording for a refused answer: people answer questions, not "pauses". */
export function pageMessage(error: ApiError): string {
  switch (error.code) {
    case 'already_responded':
      return 'This question has already been answered.';
    case 'already_voted':
      return 'You have already voted on this question; a vote cannot be changed.';
    case 'pause_closed':
      return 'This question is closed: it expired or was withdrawn.';
    default:
      return error.message;
  }
}

export interface PageState {
  question: Question;
  /** Where the form posts: the page's own path. */
  action: string;
  now: Date;
  /** The option a link preselected (?choice=), still to be confirmed. */
  preselected?: string;
  /** Set right after this person's answer was recorded. */
  justAnswered?: boolean;
  error?: string;
  /** After an answer refused field by field: what was sent, and each problem, shown beside its field. */
  refused?: Refused;
}

const EYEBROW: Record<Question['status'], string> = {
  pending: 'A decision is needed',
  responded: 'Decision recorded',
  timed_out: 'No longer open',
  cancelled: 'No longer open',
};

/**
 * Past its deadline a pause takes no answer, even before the worker has marked
 * it timed out (and applied any default answer): it is shown as expired.
 */
function asOfNow(state: PageState): PageState {
  const { question, now } = state;
  if (question.status !== 'pending' || Date.parse(question.expires_at) > now.getTime()) return state;
  return { ...state, question: { ...question, status: 'timed_out', response: null } };
}

export function renderQuestionPage(page: PageState): string {
  const state = asOfNow(page);
  const { question } = state;
  const votedAndWaiting = question.quorum && question.status === 'pending' && question.your_vote;
  return documentOf(
    <ResponseDocument title={question.title}>
      <article class="card">
        <p class="eyebrow">{votedAndWaiting ? 'Your vote is in' : EYEBROW[question.status]}</p>
        <h1>{question.title}</h1>
        {question.body && <p class="details">{question.body}</p>}
        {state.error && (
          <p class="notice error" role="alert">
            {state.error}
          </p>
        )}
        {question.quorum ? (
          <ReviewerView state={state} quorum={question.quorum} />
        ) : question.status === 'pending' ? (
          <AnswerForm state={state} />
        ) : (
          <Outcome state={state} />
        )}
      </article>
    </ResponseDocument>,
  );
}

function TimeLeft({ question, now }: { question: Question; now: Date }) {
  const left = Date.parse(question.expires_at) - now.getTime();
  return (
    <>
      <p class="time-left" data-expires-at={question.expires_at}>
        <span data-countdown="">Time left: {formatTimeLeft(left)}</span>{' '}
        <span class="hint">
          (until <Time at={question.expires_at} relative={false} />)
        </span>
      </p>
      <p class="notice" role="status" data-expired-note="" hidden></p>
    </>
  );
}

/** For a page with several forms (the reviewers' inbox): what tells this one's fields apart, and its hidden fields. */
export interface FormExtras {
  idSuffix?: string;
  hidden?: Record<string, string>;
}

function AnswerForm({ state, noun = 'answer', extras = {} }: { state: PageState; noun?: string; extras?: FormExtras }) {
  const { question, refused } = state;
  const id = textId(extras.idSuffix);
  const preselected = state.preselected && question.options.includes(state.preselected) ? state.preselected : undefined;
  // Options look alike unless the developer styled one (options_style): no
  // option is shown as the one to press. The option the reader picked in
  // their email is marked, for them to confirm.
  const classOf = (option: string) =>
    [styleOf(question.options_style, option), option === preselected ? 'picked' : undefined]
      .filter(Boolean)
      .join(' ') || undefined;
  const { form } = question;
  const textProblem = refused?.problems.find((p) => p.field === 'text')?.problem;
  const textDescribedBy = [`${id}-hint`, textProblem && `${id}-error`].filter(Boolean).join(' ');
  return (
    <>
      {refused && <ProblemSummary form={form} refused={refused} idSuffix={extras.idSuffix} noun={noun} />}
      <TimeLeft question={question} now={state.now} />
      {preselected && (
        <p class="notice" role="status">
          You picked <strong>{preselected}</strong>. Confirm it below, or choose another {noun}.
        </p>
      )}
      <form method="post" action={state.action} data-answer="">
        {Object.entries(extras.hidden ?? {}).map(([name, value]) => (
          <input type="hidden" name={name} value={value} />
        ))}
        {form && <FormInputs form={form} idSuffix={extras.idSuffix} refused={refused} />}
        {question.allow_text && (
          <div class={textProblem ? 'field invalid' : 'field'}>
            <label for={id}>
              Comment{' '}
              <span class="hint">
                {question.require_text.length > 0 ? `(required for ${question.require_text.join(', ')})` : '(optional)'}
              </span>
            </label>
            {textProblem && (
              <p class="field-error" id={`${id}-error`}>
                {textProblem}
              </p>
            )}
            <textarea
              id={id}
              name="text"
              maxlength={MAX_TEXT_LENGTH}
              aria-describedby={textDescribedBy}
              aria-invalid={textProblem ? 'true' : undefined}
            >
              {`\n${refused?.text ?? ''}`}
            </textarea>
            <p class="hint" id={`${id}-hint`}>
              Sent along with your {noun}.
            </p>
          </div>
        )}
        <fieldset class="options">
          <legend>Your {noun}</legend>
          {question.options.map((option) => (
            // An option that does not submit the form (say, reject) is not held back by the browser's checks of its fields.
            <button
              type="submit"
              name="choice"
              value={option}
              class={classOf(option)}
              formnovalidate={form !== null && !form.on.includes(option)}
            >
              {option}
            </button>
          ))}
        </fieldset>
      </form>
    </>
  );
}

/**
 * How a question nobody answered ended, on either page: it expired (with its
 * default answer, if one was applied) or its requester withdrew it.
 */
function Unanswered({ question, missed, needed }: { question: Question; missed: string; needed: string }) {
  if (question.status === 'timed_out') {
    const choice = question.response?.choice;
    return (
      <>
        <p class="state timed_out">Expired</p>
        <p>
          {missed} before <Time at={question.expires_at} relative={false} />.
        </p>
        {choice && (
          <p>
            The default answer <strong>{choice}</strong> was applied.
          </p>
        )}
      </>
    );
  }
  if (question.status === 'cancelled') {
    return (
      <>
        <p class="state cancelled">Cancelled</p>
        <p>The requester withdrew this question; no {needed} is needed.</p>
      </>
    );
  }
  return null;
}

function Outcome({ state }: { state: PageState }) {
  const { question } = state;
  const response = question.response;
  return (
    <>
      {/* Whoever opens this address sees it, so it says what happened, not who did it. */}
      {state.justAnswered && (
        <p class="notice ok" role="status">
          Thank you — the answer has been recorded.
        </p>
      )}
      {question.status === 'responded' && (
        <>
          <p class="state responded">Answered</p>
          <p class="answer">
            The answer was <strong>{response?.choice ?? ''}</strong>
            {response?.response_at && (
              <>
                {' '}
                at <Time at={response.response_at} relative={false} />
              </>
            )}
            .
          </p>
          {response?.text && <p class="answer-text">{response.text}</p>}
        </>
      )}
      <Unanswered question={question} missed="No answer was given" needed="answer" />
      <p class="hint">This page no longer takes answers.</p>
    </>
  );
}

export type Quorum = NonNullable<Question['quorum']>;

/** How the question is decided and how far the votes are, in counts only. */
function QuorumNote({ quorum, open }: { quorum: Quorum; open: boolean }) {
  const { needed, reviewers, votes_so_far: votes } = quorum;
  const rule =
    reviewers === 1
      ? 'You are the only reviewer: your vote decides'
      : needed === 1
        ? `${reviewers} reviewers; the first vote decides`
        : `${needed} of ${reviewers} reviewers must agree`;
  const progress = votes === 0 ? 'no votes yet' : `${votes} of ${reviewers} voted${open ? ' so far' : ''}`;
  return (
    <div class="quorum">
      <p class="rule">
        {rule} · <span class="progress">{progress}</span>
      </p>
      {open && quorum.veto.length > 0 && (
        <p class="hint">
          A single vote for{' '}
          {quorum.veto.map((option, index) => (
            <>
              {index > 0 && ' or '}
              <strong>{option}</strong>
            </>
          ))}{' '}
          decides at once.
        </p>
      )}
    </div>
  );
}

/** The reviewer's own vote, with their comment; or that they did not vote. */
function OwnVote({ vote }: { vote: Question['your_vote'] }) {
  if (!vote) return <p class="answer">You did not vote.</p>;
  return (
    <>
      <p class="answer">
        You voted <strong>{vote.choice}</strong> at <Time at={vote.voted_at} relative={false} />.
      </p>
      {vote.text && <p class="answer-text">{vote.text}</p>}
    </>
  );
}

/** A named reviewer's form while the question waits for their vote: on their page, and in their inbox. */
export function VoteForm({ state, quorum, extras }: { state: PageState; quorum: Quorum; extras?: FormExtras }) {
  return (
    <>
      <QuorumNote quorum={quorum} open={true} />
      <AnswerForm state={state} noun="vote" extras={extras} />
    </>
  );
}

/**
 * A named reviewer's page: the form until they vote, then their vote and
 * whether the question is decided. The outcome's comment is never shown
 * here: it is another reviewer's (the reviewer's own is under their vote).
 */
function ReviewerView({ state, quorum }: { state: PageState; quorum: Quorum }) {
  const { question } = state;
  const vote = question.your_vote;
  if (question.status === 'pending' && !vote) return <VoteForm state={state} quorum={quorum} />;
  const thanks = state.justAnswered && vote && (
    <p class="notice ok" role="status">
      Thank you — your vote has been recorded.
    </p>
  );
  if (question.status === 'pending')
    return (
      <>
        {thanks}
        {/* The page's script hides [data-while-open] once the deadline passes while it is open. */}
        <p class="state pending" data-while-open="">
          Waiting for the other reviewers
        </p>
        <OwnVote vote={vote} />
        <QuorumNote quorum={quorum} open={true} />
        <TimeLeft question={question} now={state.now} />
        <p class="hint" data-while-open="">
          Your vote is final. Reload this page later to see the decision.
        </p>
      </>
    );
  const response = question.response;
  return (
    <>
      {thanks}
      {question.status === 'responded' && (
        <>
          <p class="state responded">Decided</p>
          <p class="answer">
            The decision is <strong>{response?.choice ?? ''}</strong>
            {response?.response_at && (
              <>
                , made at <Time at={response.response_at} relative={false} />
              </>
            )}
            .
          </p>
        </>
      )}
      <Unanswered question={question} missed="No decision was reached" needed="vote" />
      <OwnVote vote={vote} />
      <QuorumNote quorum={quorum} open={false} />
      <p class="hint">This page no longer takes votes.</p>
    </>
  );
}

export function renderNotFoundPage(): string {
  return documentOf(
    <ResponseDocument title="Link not valid">
      <article class="card">
        <h1>This link is not valid</h1>
        <p>Check that the whole link was copied. If it came in a message, ask the sender for a new one.</p>
      </article>
    </ResponseDocument>,
  );
}

export function renderErrorPage(
  title = 'Something went wrong on our side',
  message = 'Your link is fine. Please try again in a moment.',
): string {
  return documentOf(
    <ResponseDocument title={title}>
      <article class="card">
        <h1>{title}</h1>
        <p>{message}</p>
      </article>
    </ResponseDocument>,
  );
}
