import { describe, expect, it } from 'vitest';
import type { Question } from '../../src/actions/answer-pause.js';
import { renderQuestionPage } from '../../src/web/page.js';

// The response page as the server renders it, for readers without JavaScript.

const question: Question = {
  title: 'Ship it?',
  body: null,
  options: ['approve', 'reject'],
  allow_text: false,
  expires_at: '2030-01-15T15:30:00.000Z',
  status: 'pending',
  response: null,
};
const render = (now: string) => renderQuestionPage({ question, action: '/r/token', now: new Date(now) });

describe('renderQuestionPage', () => {
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
