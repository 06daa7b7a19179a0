// What a human receives: an email (plain text and HTML) or a Slack message.
// The question and, in an email, who asks (the account's email, so a reader
// can tell a real request from a fake); never metadata or other data of the
// developer's. Each
// option links to the response page with that option preselected; the page
// still asks to confirm, because a GET never answers.

import type { Child } from '@pausepoint/jsx';
import { type OptionStyle, styleOf } from '../domain/form.js';
import { formatUtc } from '../domain/time-format.js';
import { documentOf } from '../html.js';

export interface Question {
  title: string;
  body: string | null;
  options: string[];
  /** How the developer marked options (options_style); the others look alike. */
  optionsStyle?: Record<string, OptionStyle>;
  expiresAt: string;
  responseUrl: string;
  /** Who asks: the email of the developer account the pause belongs to. */
  askedBy?: string;
  /** Why this message: the question itself (default) or a reminder of it. */
  kind?: 'question' | 'reminder';
  /** For a named reviewer: one line on how the question is decided, e.g. "2 of 3 reviewers must agree." */
  reviewerNote?: string;
  /** For a named reviewer: the inbox that lists every question waiting for them. */
  inboxUrl?: string;
}

export interface RenderedEmail {
  subject: string;
  text: string;
  html: string;
}

const oneLine = (value: string) => value.replace(/\s+/g, ' ').trim();
export const choiceLink = (responseUrl: string, option: string) =>
  `${responseUrl}?choice=${encodeURIComponent(option)}`;

// HTML emails are JSX like the pages, with inline styles only (mail clients
// keep no stylesheet).
const HEADING = 'margin:0 0 12px;font-size:20px;line-height:1.3';
const BUTTON =
  'display:inline-block;padding:10px 18px;border:1px solid #1f5fd1;border-radius:6px;color:#1f5fd1;' +
  'text-decoration:none;font-weight:600';
/** An option's button: alike unless the developer styled it (a filled primary, a red danger). */
const OPTION_BUTTON: Record<OptionStyle | 'plain', string> = {
  plain: BUTTON,
  primary: `${BUTTON};background:#1f5fd1;color:#ffffff`,
  danger: `${BUTTON};border-color:#a1251b;color:#a1251b`,
};

function EmailDocument({ subject, signed, children }: { subject: string; signed: boolean; children?: Child }) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{subject}</title>
      </head>
      <body style="margin:0;padding:24px;background:#f6f7f9;font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:#1b1d21">
        <div style="max-width:560px;margin:0 auto;background:#fff;border:1px solid #d9dde3;border-radius:10px;padding:24px">
          {children}
        </div>
        {signed && <p style="text-align:center;color:#5d6470;font-size:12px">Sent with pausepoint</p>}
      </body>
    </html>
  );
}

export function renderEmail(question: Question): RenderedEmail {
  const lead = question.kind === 'reminder' ? 'Reminder: decision needed' : 'Decision needed';
  const subject = `${lead}: ${oneLine(question.title).slice(0, 150)}`;
  const text = [
    question.title,
    '',
    ...(question.body ? [question.body, ''] : []),
    ...(question.askedBy ? [`Asked by ${question.askedBy}.`, ''] : []),
    ...(question.reviewerNote ? [question.reviewerNote, ''] : []),
    'Choose an answer (you will confirm it on the page):',
    ...question.options.map((option) => `- ${option}: ${choiceLink(question.responseUrl, option)}`),
    '',
    `Or open the question: ${question.responseUrl}`,
    `This request expires at ${formatUtc(question.expiresAt)}.`,
    ...(question.inboxUrl ? ['', `All questions waiting for you: ${question.inboxUrl}`] : []),
  ].join('\n');

  const html = documentOf(
    <EmailDocument subject={subject} signed={true}>
      <p style="margin:0 0 8px;color:#5d6470;font-size:13px;text-transform:uppercase;letter-spacing:.04em">
        {question.kind === 'reminder' ? 'Reminder: a decision is still needed' : 'A decision is needed'}
      </p>
      <h1 style={HEADING}>{question.title}</h1>
      {question.body && <p style="margin:0 0 16px;white-space:pre-wrap">{question.body}</p>}
      {question.askedBy && (
        <p style="margin:0 0 16px;color:#5d6470">
          Asked by <strong>{question.askedBy}</strong>
        </p>
      )}
      {question.reviewerNote && <p style="margin:0 0 16px;color:#5d6470">{question.reviewerNote}</p>}
      <p style="margin:0 0 8px;font-weight:600">Choose an answer</p>
      <div>
        {question.options.map((option) => (
          <a
            href={choiceLink(question.responseUrl, option)}
            style={`margin:0 8px 8px 0;${OPTION_BUTTON[styleOf(question.optionsStyle ?? {}, option) ?? 'plain']}`}
          >
            {option}
          </a>
        ))}
      </div>
      <p style="margin:16px 0 0;font-size:14px;color:#5d6470">
        You will confirm your choice on the page.{' '}
        <a href={question.responseUrl} style="color:#1f5fd1">
          Open the question
        </a>
        . This request expires at {formatUtc(question.expiresAt)}.
      </p>
      {question.inboxUrl && (
        <p style="margin:12px 0 0;font-size:14px;color:#5d6470">
          All questions waiting for you:{' '}
          <a href={question.inboxUrl} style="color:#1f5fd1">
            your inbox
          </a>
          .
        </p>
      )}
    </EmailDocument>,
  );
  return { subject, text, html };
}

/** The email with a single-use link to the reviewers' inbox. */
export function renderInboxLinkEmail(input: { linkUrl: string; expiresAt: string }): RenderedEmail {
  const subject = 'Your sign-in link to the pausepoint inbox';
  const text = [
    'Open this link to sign in to your inbox of questions waiting for your answer:',
    '',
    input.linkUrl,
    '',
    `The link works once, until ${formatUtc(input.expiresAt)}. If you did not ask for it, ignore this email.`,
  ].join('\n');
  const html = documentOf(
    <EmailDocument subject={subject} signed={false}>
      <h1 style={HEADING}>Sign in to your inbox</h1>
      <p style="margin:0 0 16px">Open this link to see the questions waiting for your answer:</p>
      <p style="margin:0 0 16px">
        <a href={input.linkUrl} style={BUTTON}>
          Sign in
        </a>
      </p>
      <p style="margin:0;font-size:14px;color:#5d6470">
        The link works once, until {formatUtc(input.expiresAt)}. If you did not ask for it, ignore this email.
      </p>
    </EmailDocument>,
  );
  return { subject, text, html };
}

/** The email to a live webhook's owner when it is disabled (410 Gone, or failing for WEBHOOK_DISABLE_AFTER). */
export function renderWebhookDisabledEmail(input: { url: string; reason: string; consoleUrl: string }): RenderedEmail {
  const subject = 'Your pausepoint webhook was disabled';
  const text = [
    `Your live webhook ${input.url} was disabled: ${input.reason}`,
    '',
    'No deliveries are made to it; its events are still recorded. Once the receiver works, enable it and recover what it missed:',
    '',
    input.consoleUrl,
  ].join('\n');
  const html = documentOf(
    <EmailDocument subject={subject} signed={false}>
      <h1 style={HEADING}>Your webhook was disabled</h1>
      <p style="margin:0 0 16px">
        Your live webhook <strong>{input.url}</strong> was disabled: {input.reason}
      </p>
      <p style="margin:0 0 16px">
        No deliveries are made to it; its events are still recorded. Once the receiver works, enable it and recover what
        it missed.
      </p>
      <p style="margin:0 0 16px">
        <a href={input.consoleUrl} style={BUTTON}>
          Open the webhook
        </a>
      </p>
    </EmailDocument>,
  );
  return { subject, text, html };
}

/** Slack's mrkdwn needs &, < and > escaped; everything else is shown as typed. */
const escapeSlack = (value: string) => value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** An incoming-webhook message: the question and a button to the response page. */
export function renderSlack(question: Question): string {
  const title = escapeSlack(oneLine(question.title));
  const details = question.body ? `\n${escapeSlack(question.body.slice(0, 2500))}` : '';
  return JSON.stringify({
    text: `Decision needed: ${title}`,
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text: `*Decision needed: ${title}*${details}` } },
      {
        type: 'context',
        elements: [
          {
            type: 'mrkdwn',
            text: `Options: ${question.options.map(escapeSlack).join(' · ')} — expires ${formatUtc(question.expiresAt)}`,
          },
        ],
      },
      {
        type: 'actions',
        elements: [
          {
            type: 'button',
            text: { type: 'plain_text', text: 'Answer' },
            style: 'primary',
            url: question.responseUrl,
          },
        ],
      },
    ],
  });
}

/** A Slack webhook URL is a credential: show its host and the start of its path only. */
export function maskUrl(raw: string): string {
  const url = new URL(raw);
  const [first] = url.pathname.split('/').filter(Boolean);
  return `${url.protocol}//${url.host}/${first ? `${first}/` : ''}…`;
}
