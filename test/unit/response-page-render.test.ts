import { describe, expect, it } from 'vitest';
import type { Question } from '../../src/actions/answer-pause.js';
import { renderQuestionPage } from '../../src/web/response-page.js';

// The response page as the server renders it, for readers without JavaScript.

const question: Question = {
  title: 'Ship it?',
  body: null,
  options: ['approve', 'reject'],
  allow_text: false,
  form: null,
  require_text: [],
  options_style: {},
  expires_at: '2030-01-15T15:30:00.000Z',
  status: 'pending',
  response: null,
};
const render = (now: string) => renderQuestionPage({ question, action: '/r/token', now: new Date(now) });

describe('renderQuestionPage', () => {
  it('styles no option as the one to press unless the developer marked one', () => {
    const plain = render('2030-01-15T15:00:00.000Z');
    expect(plain).toContain('<button type="submit" name="choice" value="approve">');
    expect(plain).toContain('<button type="submit" name="choice" value="reject">');
    expect(plain).not.toMatch(/class="(primary|danger)/);
    const styled = renderQuestionPage({
      question: { ...question, options_style: { reject: 'danger', approve: 'primary' } },
      action: '/r/token',
      now: new Date('2030-01-15T15:00:00.000Z'),
    });
    expect(styled).toContain('value="approve" class="primary"');
    expect(styled).toContain('value="reject" class="danger"');
    // Options named after what every object inherits are styled by options_style's own entries only.
    const inherited = renderQuestionPage({
      question: { ...question, options: ['__proto__', 'toString', 'constructor'] },
      action: '/r/token',
      now: new Date('2030-01-15T15:00:00.000Z'),
    });
    expect(inherited).toContain('<button type="submit" name="choice" value="__proto__">');
    expect(inherited).toContain('<button type="submit" name="choice" value="toString">');
    expect(inherited).toContain('<button type="submit" name="choice" value="constructor">');
  });

  it('draws a form’s inputs prefilled with the proposed values (escaped), and says which options need a reason', () => {
    const html = renderQuestionPage({
      question: {
        ...question,
        options: ['approve', 'reject'],
        allow_text: true,
        require_text: ['reject'],
        form: {
          schema: {
            type: 'object',
            properties: {
              amount: { type: 'number', title: 'Amount (USD)', minimum: 1, description: 'Refunded <now>' },
              args: { type: 'object' },
            },
            required: ['amount', 'args'],
          },
          values: { amount: 1250, args: { to: '<b>ann</b>' } },
          on: ['approve'],
        },
      },
      action: '/r/token',
      now: new Date('2030-01-15T15:00:00.000Z'),
    });
    expect(html).toContain('<input type="hidden" name="form" value="drawn"/>');
    expect(html).toContain(
      '<label for="field-0">Amount (USD)</label><p class="hint" id="field-0-hint">Refunded &lt;now&gt;',
    );
    expect(html).toContain(
      '<input type="number" id="field-0" name="values.amount" aria-describedby="field-0-hint" value="1250" required="" min="1" step="any"',
    );
    expect(html).toContain('name="values.args"');
    expect(html).toContain('&quot;to&quot;: &quot;&lt;b&gt;ann&lt;/b&gt;&quot;');
    expect(html).toContain('Answering approve sends these values.');
    // Reject does not submit the form: the browser's checks of its fields do not hold it back.
    expect(html).toContain('<button type="submit" name="choice" value="reject" formnovalidate="">');
    expect(html).toContain('<button type="submit" name="choice" value="approve">');
    expect(html).toContain('(required for reject)');
    expect(html).not.toContain('(optional)');
    expect(render('2030-01-15T15:00:00.000Z')).not.toContain('name="form"');
  });

  it('after a refused answer: a summary, each error beside its field, and what was typed', () => {
    const html = renderQuestionPage({
      question: {
        ...question,
        options: ['approve', 'reject'],
        allow_text: true,
        require_text: ['reject'],
        form: {
          schema: { type: 'object', properties: { amount: { type: 'number', title: 'Amount' } } },
          values: { amount: 5 },
          on: ['approve'],
        },
      },
      action: '/r/token',
      now: new Date('2030-01-15T15:00:00.000Z'),
      refused: {
        text: 'my <reason>',
        fields: { amount: 'twelve' },
        problems: [
          { field: 'values.amount', problem: 'must be a number' },
          { field: 'text', problem: 'is required' },
        ],
      },
    });
    expect(html).toContain('role="alert"');
    expect(html).toContain('<li><a href="#field-0">Amount</a> must be a number</li>');
    expect(html).toContain('<li><a href="#text">Comment</a> is required</li>');
    expect(html).toContain('aria-invalid="true" aria-describedby="field-0-error" value="twelve"');
    expect(html).toContain('<p class="field-error" id="field-0-error">must be a number</p>');
    expect(html).toContain(
      'aria-describedby="text-hint text-error" aria-invalid="true">\nmy &lt;reason&gt;</textarea>',
    );
  });

  it('shows an open question with the deadline in UTC, marked up for the script to localise', () => {
    const html = render('2030-01-15T15:00:00.000Z');
    expect(html).toContain('A decision is needed');
    expect(html).toContain('Time left: 30 min 0 s');
    expect(html).toContain('<time datetime="2030-01-15T15:30:00.000Z">2030-01-15 15:30 UTC</time>');
    expect(html).toContain('<form');
  });

  it('shows a question past its deadline as expired, before the worker has marked it so', () => {
    const html = render('2030-01-15T15:30:01.000Z');
    expect(html).toContain('No longer open');
    expect(html).toContain('Expired');
    expect(html).toContain('No answer was given before <time datetime="2030-01-15T15:30:00.000Z">');
    expect(html).not.toContain('A decision is needed');
    expect(html).not.toContain('until');
    expect(html).not.toContain('<form');
    expect(html).not.toContain('<button');
  });
});

// A named reviewer's page: the quorum in counts, their own vote, the outcome;
// never another reviewer's name or comment (the question carries none, and the
// outcome's comment is not shown).
describe('renderQuestionPage for a reviewer', () => {
  const quorum = { needed: 2, reviewers: 3, votes_so_far: 1, veto: [] as string[] };
  const voted = {
    choice: 'approve',
    text: 'Looks good <b>to me</b>',
    values: null,
    voted_at: '2030-01-15T15:05:00.000Z',
  };
  const now = new Date('2030-01-15T15:10:00.000Z');
  const reviewerPage = (over: Partial<Question>, extra: { justAnswered?: boolean; error?: string } = {}) =>
    renderQuestionPage({
      question: { ...question, allow_text: true, quorum, your_vote: null, ...over },
      action: '/r/t',
      now,
      ...extra,
    });

  it('before voting: the question, the quorum in counts, a veto note and the form', () => {
    const html = reviewerPage({ quorum: { ...quorum, veto: ['reject'] } });
    expect(html).toContain('A decision is needed');
    expect(html).toContain(
      '<p class="rule">2 of 3 reviewers must agree · <span class="progress">1 of 3 voted so far</span></p>',
    );
    expect(html).toContain('A single vote for <strong>reject</strong> decides at once.');
    expect(html).toContain('<legend>Your vote</legend>');
    expect(html).toContain('Sent along with your vote.');
    expect(html).toContain('Time left: 20 min 0 s');
    expect(html).toContain('<button type="submit" name="choice" value="approve">approve</button>');
    expect(html).not.toContain('You voted');
  });

  it('words the rule for one reviewer, a quorum of one, and no votes yet', () => {
    expect(reviewerPage({ quorum: { ...quorum, reviewers: 1, needed: 1, votes_so_far: 0 } })).toContain(
      'You are the only reviewer: your vote decides · <span class="progress">no votes yet</span>',
    );
    expect(reviewerPage({ quorum: { ...quorum, needed: 1, votes_so_far: 0 } })).toContain(
      '3 reviewers; the first vote decides · <span class="progress">no votes yet</span>',
    );
    expect(reviewerPage({})).not.toContain('A single vote for');
  });

  it('after voting while undecided: their vote (escaped), the progress, waiting for others, no form', () => {
    const html = reviewerPage({ your_vote: voted, quorum: { ...quorum, veto: ['reject'] } }, { justAnswered: true });
    expect(html).toContain('Your vote is in');
    expect(html).toContain('Thank you — your vote has been recorded.');
    expect(html).toContain('Waiting for the other reviewers');
    expect(html).toContain(
      'You voted <strong>approve</strong> at <time datetime="2030-01-15T15:05:00.000Z">2030-01-15 15:05 UTC</time>.',
    );
    expect(html).toContain('<p class="answer-text">Looks good &lt;b&gt;to me&lt;/b&gt;</p>');
    expect(html).toContain('2 of 3 reviewers must agree · <span class="progress">1 of 3 voted so far</span>');
    expect(html).toContain('Time left: 20 min 0 s');
    expect(html).not.toContain('A decision is needed');
    expect(html).not.toContain('<form');
    expect(html).not.toContain('<button');
    expect(html).not.toContain('<textarea');
  });

  it("an email's preselect link asks to confirm the vote, and is ignored once voted", () => {
    const extra = { preselected: 'reject' };
    const open = renderQuestionPage({
      question: { ...question, quorum, your_vote: null },
      action: '/r/t',
      now,
      ...extra,
    });
    expect(open).toContain('You picked <strong>reject</strong>. Confirm it below, or choose another vote.');
    expect(open).toContain('value="reject" class="picked"');
    const done = renderQuestionPage({
      question: { ...question, quorum, your_vote: voted },
      action: '/r/t',
      now,
      ...extra,
    });
    expect(done).not.toContain('You picked');
    expect(done).not.toContain('<form');
  });

  it('thanks only a reviewer whose vote is recorded (?answered=1 alone proves nothing)', () => {
    expect(reviewerPage({}, { justAnswered: true })).not.toContain('Thank you');
  });

  it('a second vote: the already-voted message, their vote, and no form', () => {
    const html = reviewerPage(
      { your_vote: voted },
      { error: 'You have already voted on this question; a vote cannot be changed.' },
    );
    expect(html).toContain(
      '<p class="notice error" role="alert">You have already voted on this question; a vote cannot be changed.</p>',
    );
    expect(html).toContain('You voted <strong>approve</strong>');
    expect(html).not.toContain('Thank you');
    expect(html).not.toContain('<form');
  });

  it('once decided: the outcome and their own vote, never the deciding comment', () => {
    const response = {
      choice: 'reject',
      text: 'SOMEONE-ELSES-COMMENT',
      values: null,
      edited: false,
      response_at: '2030-01-15T15:08:00.000Z',
    };
    const decided = {
      status: 'responded' as const,
      response,
      quorum: { ...quorum, votes_so_far: 3, veto: ['reject'] },
    };
    const html = reviewerPage({ ...decided, your_vote: voted });
    expect(html).toContain('Decision recorded');
    expect(html).toContain('Decided');
    expect(html).toContain(
      'The decision is <strong>reject</strong>, made at <time datetime="2030-01-15T15:08:00.000Z">',
    );
    expect(html).toContain('You voted <strong>approve</strong>');
    expect(html).toContain('2 of 3 reviewers must agree · <span class="progress">3 of 3 voted</span></p>');
    expect(html).toContain('This page no longer takes votes.');
    expect(html).not.toContain('SOMEONE-ELSES-COMMENT');
    expect(html).not.toContain('A single vote for');
    expect(html).not.toContain('Waiting');
    expect(html).not.toContain('<form');

    const silent = reviewerPage(decided);
    expect(silent).toContain('You did not vote.');
    expect(silent).not.toContain('<form');
  });

  it('past the deadline, expired or cancelled: closed, with their vote and no form', () => {
    const late = renderQuestionPage({
      question: { ...question, quorum, your_vote: voted },
      action: '/r/t',
      now: new Date('2030-01-15T15:30:01.000Z'),
    });
    expect(late).toContain('No longer open');
    expect(late).toContain('No decision was reached before');
    expect(late).toContain('You voted <strong>approve</strong>');
    expect(late).not.toContain('Waiting');
    expect(late).not.toContain('<form');

    const withDefault = reviewerPage({
      status: 'timed_out',
      response: { choice: 'reject', text: null, values: null, edited: false, response_at: question.expires_at },
    });
    expect(withDefault).toContain('The default answer <strong>reject</strong> was applied.');
    expect(withDefault).toContain('You did not vote.');

    const cancelled = reviewerPage({ status: 'cancelled', your_vote: voted });
    expect(cancelled).toContain('Cancelled');
    expect(cancelled).toContain('no vote is needed');
    expect(cancelled).not.toContain('<form');
  });

  it('leaves the shared-link page as it was: no quorum, no vote wording', () => {
    const html = render('2030-01-15T15:00:00.000Z');
    expect(html).toContain('<legend>Your answer</legend>');
    expect(html).not.toMatch(/reviewer|vote|quorum/i);
  });
});
