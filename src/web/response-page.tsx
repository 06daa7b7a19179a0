import type { Question } from '../actions/answer-pause.js';
import { MAX_TEXT_LENGTH } from '../domain/pause.js';
import { formatTimeLeft, formatUtc } from '../domain/time-format.js';

// The response page, rendered on the server: the question is readable and
// answerable without JavaScript. Every value from the developer is escaped.
// A named reviewer's page (the question has `quorum`) also shows how the
// question is decided, in counts only, and their own vote: never another
// reviewer's name, vote or comment.

const escapeHtml = (value: string): string =>
  value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);

// In UTC on the server; the page's script shows it in the reader's own zone.
const timeTag = (iso: string) => `<time datetime="${escapeHtml(iso)}">${formatUtc(iso)}</time>`;

function layout(title: string, content: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<title>${escapeHtml(title)}</title>
<link rel="stylesheet" href="/assets/page.css">
</head>
<body>
<main>
${content}
<footer>Sent with pausepoint</footer>
</main>
<script src="/assets/page.js" defer></script>
</body>
</html>`;
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
  const eyebrow = votedAndWaiting ? 'Your vote is in' : EYEBROW[question.status];
  const parts = [`<p class="eyebrow">${eyebrow}</p>`, `<h1>${escapeHtml(question.title)}</h1>`];
  if (question.body) parts.push(`<p class="details">${escapeHtml(question.body)}</p>`);
  if (state.error) parts.push(`<p class="notice error" role="alert">${escapeHtml(state.error)}</p>`);
  if (question.quorum) parts.push(reviewerView(state, question.quorum));
  else parts.push(question.status === 'pending' ? answerForm(state) : outcome(state));
  return layout(question.title, `<article class="card">\n${parts.join('\n')}\n</article>`);
}

function timeLeft(question: Question, now: Date): string {
  const left = Date.parse(question.expires_at) - now.getTime();
  return `<p class="time-left" data-expires-at="${escapeHtml(question.expires_at)}"><span data-countdown>Time left: ${formatTimeLeft(left)}</span> <span class="hint">(until ${timeTag(question.expires_at)})</span></p>
<p class="notice" role="status" data-expired-note hidden></p>`;
}

/** For a page with several forms (the reviewers' inbox): what tells this one's fields apart, and its hidden fields. */
export interface FormExtras {
  idSuffix?: string;
  hidden?: Record<string, string>;
}

function answerForm(state: PageState, noun = 'answer', extras: FormExtras = {}): string {
  const { question } = state;
  const id = `text${extras.idSuffix ?? ''}`;
  const hidden = Object.entries(extras.hidden ?? {})
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">\n`)
    .join('');
  const preselected = state.preselected && question.options.includes(state.preselected) ? state.preselected : undefined;
  const buttons = question.options
    .map((option) => {
      const primary = preselected === undefined ? option === question.options[0] : option === preselected;
      return `<button type="submit" name="choice" value="${escapeHtml(option)}"${primary ? ' class="primary"' : ''}>${escapeHtml(option)}</button>`;
    })
    .join('\n');
  const text = question.allow_text
    ? `<label for="${id}">Comment <span class="hint">(optional)</span></label>
<textarea id="${id}" name="text" maxlength="${MAX_TEXT_LENGTH}" aria-describedby="${id}-hint"></textarea>
<p class="hint" id="${id}-hint">Sent along with your ${noun}.</p>`
    : '';
  const confirm = preselected
    ? `<p class="notice" role="status">You picked <strong>${escapeHtml(preselected)}</strong>. Confirm it below, or choose another ${noun}.</p>`
    : '';
  return `${timeLeft(question, state.now)}
${confirm}
<form method="post" action="${escapeHtml(state.action)}" data-answer>
${hidden}${text}
<fieldset class="options">
<legend>Your ${noun}</legend>
${buttons}
</fieldset>
</form>`;
}

function outcome(state: PageState): string {
  const { question } = state;
  const response = question.response;
  const lines: string[] = [];
  if (state.justAnswered) {
    // Whoever opens this address sees it, so it says what happened, not who did it.
    lines.push(`<p class="notice ok" role="status">Thank you — the answer has been recorded.</p>`);
  }
  switch (question.status) {
    case 'responded':
      lines.push(`<p class="state responded">Answered</p>`);
      lines.push(
        `<p class="answer">The answer was <strong>${escapeHtml(response?.choice ?? '')}</strong>` +
          (response?.response_at ? ` at ${timeTag(response.response_at)}` : '') +
          '.</p>',
      );
      if (response?.text) lines.push(`<p class="answer-text">${escapeHtml(response.text)}</p>`);
      break;
    case 'timed_out':
      lines.push(`<p class="state timed_out">Expired</p>`);
      lines.push(`<p>No answer was given before ${timeTag(question.expires_at)}.</p>`);
      if (response?.choice)
        lines.push(`<p>The default answer <strong>${escapeHtml(response.choice)}</strong> was applied.</p>`);
      break;
    case 'cancelled':
      lines.push(`<p class="state cancelled">Cancelled</p>`);
      lines.push(`<p>The requester withdrew this question; no answer is needed.</p>`);
      break;
  }
  lines.push(`<p class="hint">This page no longer takes answers.</p>`);
  return lines.join('\n');
}

export type Quorum = NonNullable<Question['quorum']>;

/** How the question is decided and how far the votes are, in counts only. */
function quorumNote(quorum: Quorum, open: boolean): string {
  const { needed, reviewers, votes_so_far: votes } = quorum;
  const rule =
    reviewers === 1
      ? 'You are the only reviewer: your vote decides'
      : needed === 1
        ? `${reviewers} reviewers; the first vote decides`
        : `${needed} of ${reviewers} reviewers must agree`;
  const progress = votes === 0 ? 'no votes yet' : `${votes} of ${reviewers} voted${open ? ' so far' : ''}`;
  const lines = [`<p class="rule">${rule} · <span class="progress">${progress}</span></p>`];
  if (open && quorum.veto.length > 0) {
    const options = quorum.veto.map((option) => `<strong>${escapeHtml(option)}</strong>`).join(' or ');
    lines.push(`<p class="hint">A single vote for ${options} decides at once.</p>`);
  }
  return `<div class="quorum">\n${lines.join('\n')}\n</div>`;
}

/** The reviewer's own vote, with their comment; or that they did not vote. */
function ownVote(question: Question): string {
  const vote = question.your_vote;
  if (!vote) return `<p class="answer">You did not vote.</p>`;
  const lines = [
    `<p class="answer">You voted <strong>${escapeHtml(vote.choice)}</strong> at ${timeTag(vote.voted_at)}.</p>`,
  ];
  if (vote.text) lines.push(`<p class="answer-text">${escapeHtml(vote.text)}</p>`);
  return lines.join('\n');
}

/** A named reviewer's form while the question waits for their vote: on their page, and in their inbox. */
export function renderVoteForm(state: PageState, quorum: Quorum, extras: FormExtras = {}): string {
  return `${quorumNote(quorum, true)}\n${answerForm(state, 'vote', extras)}`;
}

/**
 * A named reviewer's page: the form until they vote, then their vote and
 * whether the question is decided. The outcome's comment is never shown
 * here: it is another reviewer's (the reviewer's own is under their vote).
 */
function reviewerView(state: PageState, quorum: Quorum): string {
  const { question } = state;
  const voted = Boolean(question.your_vote);
  const lines: string[] = [];
  if (question.status === 'pending' && !voted) return renderVoteForm(state, quorum);
  if (state.justAnswered && voted) {
    lines.push(`<p class="notice ok" role="status">Thank you — your vote has been recorded.</p>`);
  }
  const response = question.response;
  switch (question.status) {
    case 'pending':
      // The page's script hides [data-while-open] once the deadline passes while it is open.
      lines.push(`<p class="state pending" data-while-open>Waiting for the other reviewers</p>`);
      lines.push(ownVote(question));
      lines.push(quorumNote(quorum, true));
      lines.push(timeLeft(question, state.now));
      lines.push(`<p class="hint" data-while-open>Your vote is final. Reload this page later to see the decision.</p>`);
      return lines.join('\n');
    case 'responded':
      lines.push(`<p class="state responded">Decided</p>`);
      lines.push(
        `<p class="answer">The decision is <strong>${escapeHtml(response?.choice ?? '')}</strong>` +
          (response?.response_at ? `, made at ${timeTag(response.response_at)}` : '') +
          '.</p>',
      );
      break;
    case 'timed_out':
      lines.push(`<p class="state timed_out">Expired</p>`);
      lines.push(`<p>No decision was reached before ${timeTag(question.expires_at)}.</p>`);
      if (response?.choice)
        lines.push(`<p>The default answer <strong>${escapeHtml(response.choice)}</strong> was applied.</p>`);
      break;
    case 'cancelled':
      lines.push(`<p class="state cancelled">Cancelled</p>`);
      lines.push(`<p>The requester withdrew this question; no vote is needed.</p>`);
      break;
  }
  lines.push(ownVote(question));
  lines.push(quorumNote(quorum, false));
  lines.push(`<p class="hint">This page no longer takes votes.</p>`);
  return lines.join('\n');
}

export function renderNotFoundPage(): string {
  return layout(
    'Link not valid',
    `<article class="card"><h1>This link is not valid</h1>
<p>Check that the whole link was copied. If it came in a message, ask the sender for a new one.</p></article>`,
  );
}

export function renderErrorPage(
  title = 'Something went wrong on our side',
  message = 'Your link is fine. Please try again in a moment.',
): string {
  return layout(title, `<article class="card"><h1>${escapeHtml(title)}</h1>\n<p>${escapeHtml(message)}</p></article>`);
}
