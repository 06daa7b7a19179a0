// pausepoint pauses list|get|cancel
import type { Pause } from '@pausepoint/sdk';
import { clientFrom, GLOBAL_HELP, out, parse, printJson, reportError, table, UsageError } from './common.js';
import { parseDuration } from './duration.js';

export const PAUSES_HELP = `Usage:
  pausepoint pauses list [--status STATUS] [--limit N | --all]
  pausepoint pauses get PAUSE_ID [--wait DURATION]
  pausepoint pauses cancel PAUSE_ID

  list     pauses, newest first (--status pending|responded|timed_out|cancelled;
           --limit defaults to 20; --all lists every one)
  get      one pause; --wait up to 60s waits for it to leave pending
  cancel   cancel a pending pause

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
      const pauses = await client.pauses.list({ status, limit: Math.min(100, max) }).toArray(max);
      if (json) printJson(pauses);
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
    throw new UsageError(`unknown action "pauses ${action}"; use list, get or cancel`);
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
  }
  lines.push(['expires', pause.expires_at], ['created', pause.created_at], ['mode', pause.mode]);
  if (pause.status === 'pending' && pause.response_url !== null) lines.push(['link', pause.response_url]);
  if (Object.keys(pause.metadata).length > 0) lines.push(['metadata', JSON.stringify(pause.metadata)]);
  const width = Math.max(...lines.map(([label]) => label.length));
  return lines.map(([label, value]) => `${`${label}:`.padEnd(width + 2)}${value}`).join('\n');
}
