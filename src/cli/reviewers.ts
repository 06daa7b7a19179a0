// Reviewers on the command line: `ana@example.com` or `Ana Lima <ana@example.com>`.
import type { ReviewerParams } from '@pausepoint/sdk';
import { UsageError } from './common.js';

/** A reviewer from a flag's value; the service checks the address itself. */
export function parseReviewer(text: string, flag: string): ReviewerParams {
  const trimmed = text.trim();
  const named = /^(.*?)\s*<([^<>\s]+)>$/.exec(trimmed);
  const email = named ? (named[2] ?? '') : trimmed;
  const name = named
    ? (named[1] ?? '')
        .trim()
        .replace(/^"(.*)"$/, '$1')
        .trim()
    : '';
  if (!/^[^\s<>@]+@[^\s<>@]+$/.test(email)) {
    throw new UsageError(
      `${flag}: not an email address: "${text}" (try ana@example.com or "Ana Lima <ana@example.com>")`,
    );
  }
  return name ? { email, name } : { email };
}

/** `Ana Lima <ana@example.com>`, or the address alone when there is no name. */
export function reviewerLabel(reviewer: { email: string | null; name?: string | null | undefined }): string {
  if (reviewer.email === null) return reviewer.name ?? 'someone in Slack';
  return reviewer.name ? `${reviewer.name} <${reviewer.email}>` : reviewer.email;
}
