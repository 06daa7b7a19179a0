// pausepoint pauses list|get|cancel|timeline
import type { Pause, Reviewer, TimelineEntry } from '@pausepoint/sdk';
import {
  clientFrom,
  GLOBAL_HELP,
  listObject,
  out,
  parse,
  printJson,
  reportError,
  table,
  UsageError,
} from './common.js';
import { formatDuration, parseDuration } from './duration.js';
import { reviewerLabel } from './reviewers.js';

export const PAUSES_HELP = `Usage:
  pausepoint pauses list [--status STATUS] [--limit N | --all]
  pausepoint pauses get PAUSE_ID [--wait DURATION]
  pausepoint pauses cancel PAUSE_ID
  pausepoint pauses timeline PAUSE_ID

  list      pauses, newest first (--status pending|responded|timed_out|cancelled;
            --limit defaults to 20; --all lists every one)
  get       one pause, with its reviewers and their votes; --wait up to 60s
            waits for it to leave pending
  cancel    cancel a pending pause
  timeline  who did what and when, from creation to the outcome: notifications,
            reminders, escalation, each vote (the pause's audit record)

Exit status: 0 done, 1 the service refused or could not be reached, 2 bad usage.

${GLOBAL_HELP}`;

const OPTIONS = {
  status: { type: 'string' },
  limit: { type: 'string' },
  all: { type: 'boolean' },
  wait: { type: 'string' },
} as const;

const STATUSES = ['pending', 'responded', 'timed_out', 'cancelled'] as const;

export async function pausesCommand(args: string[]): Promise<number> {
  let json = args.includes('--json');
  try {
    const { values, positionals } = parse(args, OPTIONS);
    json = values.json === true;
    const [action, id, ...extra] = positionals;
    if (values.help || action === undefined || action === 'help') {
      out(PAUSES_HELP);
      return values.help || action === 'help' ? 0 : 2;
    }
    if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}"`);
    const client = clientFrom(values);

    if (action === 'list' || action === 'ls') {
      if (id !== undefined) throw new UsageError(`unexpected argument "${id}"`);
      const status = values.status as (typeof STATUSES)[number] | undefined;
      if (status !== undefined && !STATUSES.includes(status)) {
        throw new UsageError(`--status must be one of ${STATUSES.join(', ')}`);
      }
      const max = values.all ? Number.POSITIVE_INFINITY : positiveInteger(values.limit ?? '20', '--limit');
      const list = await listObject(client.pauses.list({ status, limit: Math.min(100, max + 1) }), max);
      const pauses = list.data;
      if (json) printJson(list);
      else if (pauses.length === 0) out('No pauses.');
      else out(pausesTable(pauses));
      return 0;
    }

    if (action === 'get' || action === 'cancel') {
      if (id === undefined) throw new UsageError(`pauses ${action} needs a pause id`);
      let pause: Pause;
      if (action === 'get') {
        const wait = values.wait === undefined ? undefined : parseDuration(values.wait, '--wait');
        if (wait !== undefined && wait > 60) throw new UsageError('--wait is at most 60s');
        pause = await client.pauses.get(id, { wait });
      } else {
        pause = await client.pauses.cancel(id);
      }
      if (json) printJson(pause);
      else out(action === 'cancel' ? `Cancelled ${pause.id}` : describePause(pause));
      return 0;
    }
    if (action === 'timeline') {
      if (id === undefined) throw new UsageError('pauses timeline needs a pause id');
      const { data } = await client.pauses.timeline(id);
      if (json) printJson(data);
      else out(timelineTable(data));
      return 0;
    }
    throw new UsageError(`unknown action "pauses ${action}"; use list, get, cancel or timeline`);
  } catch (error) {
    reportError(error, json, PAUSES_HELP);
    return error instanceof UsageError ? 2 : 1;
  }
}

export function positiveInteger(text: string, flag: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`${flag} must be a whole number of at least 1`);
  return n;
}

function pausesTable(pauses: Pause[]): string {
  return table(
    ['ID', 'STATUS', 'CHOICE', 'CREATED', 'TITLE'],
    pauses.map((pause) => [
      pause.id,
      pause.status,
      pause.response?.choice ?? '-',
      pause.created_at,
      pause.title.length > 60 ? `${pause.title.slice(0, 59)}…` : pause.title,
    ]),
  );
}

function describePause(pause: Pause): string {
  const lines: [string, string][] = [
    ['id', pause.id],
    ['status', pause.status],
    ['title', pause.title],
  ];
  if (pause.body) lines.push(['body', pause.body]);
  lines.push(['options', pause.options.join(', ')]);
  if (pause.timeout_default !== null) lines.push(['default', pause.timeout_default]);
  if (pause.response) {
    lines.push(['choice', pause.response.choice ?? '(none)']);
    if (pause.response.text !== null) lines.push(['text', pause.response.text]);
    lines.push(['answered', pause.response.response_at]);
    if (pause.response.responded_by) lines.push(['decided by', reviewerLabel(pause.response.responded_by)]);
  }
  if (pause.reviewers.length > 0) {
    const rules = [`${pause.quorum ?? 1} of ${pause.reviewers.length}`];
    if (pause.veto.length > 0) rules.push(`veto ${pause.veto.join(', ')}`);
    lines.push(['quorum', rules.join('; ')]);
    for (const reviewer of pause.reviewers) lines.push(['reviewer', describeReviewer(reviewer)]);
    if (pause.remind_every !== null) {
      lines.push(['reminders', `every ${formatDuration(pause.remind_every)}, at most ${pause.remind_max ?? 3}`]);
    }
    if (pause.escalate !== null) {
      const to = pause.escalate.reviewers.map(reviewerLabel).join(', ');
      const done = pause.escalate.escalated_at === null ? '' : ` (escalated ${pause.escalate.escalated_at})`;
      lines.push(['escalation', `after ${formatDuration(pause.escalate.after)} to ${to}${done}`]);
    }
  }
  lines.push(['expires', pause.expires_at], ['created', pause.created_at], ['mode', pause.mode]);
  if (pause.status === 'pending' && pause.response_url !== null) lines.push(['link', pause.response_url]);
  if (Object.keys(pause.metadata).length > 0) lines.push(['metadata', JSON.stringify(pause.metadata)]);
  const width = Math.max(...lines.map(([label]) => label.length));
  return lines.map(([label, value]) => `${`${label}:`.padEnd(width + 2)}${value}`).join('\n');
}

function describeReviewer(reviewer: Reviewer): string {
  const added = reviewer.added_by === 'escalation' ? ' (added by escalation)' : '';
  if (reviewer.vote === null) return `${reviewerLabel(reviewer)}: not voted${added}`;
  const text = reviewer.vote.text === null ? '' : ` ${JSON.stringify(reviewer.vote.text)}`;
  return `${reviewerLabel(reviewer)}: ${reviewer.vote.choice}${text} at ${reviewer.vote.voted_at}${added}`;
}

function timelineTable(entries: TimelineEntry[]): string {
  if (entries.length === 0) return 'No entries.';
  return table(
    ['AT', 'WHAT', 'BY', 'DETAIL'],
    entries.map((entry) => [
      entry.at,
      entry.type,
      entry.actor.email ? `${entry.actor.type} ${entry.actor.email}` : entry.actor.type,
      describeDetail(entry),
    ]),
  );
}

/** What an entry's detail says, for a person; `--json` has every field, ids included. */
function describeDetail({ type, detail }: TimelineEntry): string {
  const text = (value: unknown) => (typeof value === 'string' ? ` ${JSON.stringify(value)}` : '');
  const choice = (value: unknown) => (typeof value === 'string' ? value : '');
  switch (type) {
    case 'created':
      return typeof detail.reviewers === 'number' && detail.reviewers > 0
        ? `${detail.reviewers} reviewer${detail.reviewers === 1 ? '' : 's'}, quorum ${detail.quorum ?? 1}`
        : '';
    case 'notified':
    case 'reminded':
    case 'notification_failed': {
      const what = [detail.kind, type === 'notified' ? detail.status : undefined].filter(Boolean).join(', ');
      const error = type === 'notification_failed' && detail.error ? `: ${detail.error}` : '';
      return `${detail.channel} to ${detail.to}${what ? ` (${what})` : ''}${error}`;
    }
    case 'escalated': {
      const added = Array.isArray(detail.reviewers) ? (detail.reviewers as { email: string }[]) : [];
      return `added ${added.map((reviewer) => reviewer.email).join(', ')}`;
    }
    case 'voted':
    case 'responded':
      return `${choice(detail.choice)}${text(detail.text)}`;
    case 'timed_out':
      return typeof detail.choice === 'string' ? `${detail.choice} (the default)` : 'no default';
    default:
      return Object.entries(detail)
        .filter(([, value]) => value !== null && value !== undefined)
        .map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`)
        .join(' ');
  }
}
