import { createHmac } from 'node:crypto';
import type { Store } from '../../src/store/store.js';
import type { ReceivedRequest } from '../helpers/https-receiver.js';
import type { ReceivedMail } from '../helpers/smtp.js';
import type { Ledger } from './workload.js';

// What must hold after any number of kill -9s, once the service has settled,
// checked against the raw rows, the webhook receiver's log, the SMTP server's
// mailbox and what the clients were told. Each broken rule is one line of the
// result; an empty result means every invariant held.

export interface ChaosWebhook {
  id: string;
  /** The receiver path it posts to (one per webhook, so a request tells which webhook sent it). */
  path: string;
  secret: string;
}

export interface Observed {
  store: Store;
  ledger: Ledger;
  runId: string;
  webhooks: ChaosWebhook[];
  requests: ReceivedRequest[];
  mails: ReceivedMail[];
}

type Rows = Awaited<ReturnType<typeof loadRows>>;
type PauseRow = Rows['pauses'][number];

async function loadRows(store: Store) {
  const db = store.db;
  const [pauses, events, webhooks, deliveries, notifications] = await Promise.all([
    db.selectFrom('pauses').selectAll().execute(),
    db.selectFrom('events').select(['id', 'pause_id', 'developer_id', 'mode', 'type', 'payload']).execute(),
    db.selectFrom('webhooks').select(['id', 'developer_id', 'mode', 'events']).execute(),
    db.selectFrom('deliveries').select(['id', 'webhook_id', 'event_id', 'status', 'attempts']).execute(),
    db.selectFrom('notifications').select(['id', 'pause_id', 'channel', 'recipient', 'status']).execute(),
  ]);
  return { pauses, events, webhooks, deliveries, notifications };
}

/** Every broken invariant, grouped and capped so that a bad run stays readable. */
export async function checkInvariants(observed: Observed): Promise<string[]> {
  const rows = await loadRows(observed.store);
  const now = new Date().toISOString();
  const groups: Array<[string, string[]]> = [
    ['1. one state, one matching terminal event', checkStates(rows)],
    ['2. nothing pending past expires_at', checkOverdue(rows, now)],
    ['3. every event delivered to every subscribed webhook', checkDeliveries(rows, observed)],
    ['4. no notification lost, none sent in test mode', checkNotifications(rows, observed.mails)],
    ['5. every acknowledged call reflected in the final state', checkAcknowledged(rows, observed)],
  ];
  return groups.flatMap(([rule, broken]) =>
    broken.length === 0 ? [] : [`${rule}: ${broken.length} violation(s)`, ...cap(broken, 10).map((b) => `  ${b}`)],
  );
}

const cap = (lines: string[], max: number) =>
  lines.length <= max ? lines : [...lines.slice(0, max), `(${lines.length - max} more)`];

function groupBy<T>(items: T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) groups.set(key(item), [...(groups.get(key(item)) ?? []), item]);
  return groups;
}

function checkStates({ pauses, events }: Rows): string[] {
  const broken: string[] = [];
  const eventsOf = groupBy(events, (e) => e.pause_id);
  const ids = new Set(pauses.map((p) => p.id));
  for (const pause of pauses) {
    broken.push(...responseProblems(pause).map((problem) => `${pause.id} (${pause.status}): ${problem}`));
    const own = eventsOf.get(pause.id) ?? [];
    const expected = pause.status === 'pending' ? [] : [`pause.${pause.status}`];
    const types = own.map((e) => e.type);
    if (JSON.stringify(types) !== JSON.stringify(expected)) {
      broken.push(`${pause.id} is ${pause.status} with events [${types.join(', ')}]`);
      continue;
    }
    for (const event of own) {
      const payload = JSON.parse(event.payload);
      const choiceMatches = pause.status === 'cancelled' || payload.data?.choice === pause.response_choice;
      if (payload.event !== event.type || payload.pause_id !== pause.id || !choiceMatches) {
        broken.push(`${pause.id}: event ${event.id} payload does not match the pause: ${event.payload}`);
      }
    }
  }
  for (const event of events) if (!ids.has(event.pause_id)) broken.push(`event ${event.id} of an unknown pause`);
  return broken;
}

/** What the stored response must look like in each state. */
function responseProblems(pause: PauseRow): string[] {
  const options = JSON.parse(pause.options) as string[];
  switch (pause.status) {
    case 'pending':
    case 'cancelled':
      return pause.response_choice === null && pause.response_at === null ? [] : ['has a response'];
    case 'responded':
      return options.includes(pause.response_choice ?? '') && pause.response_at !== null
        ? []
        : [`response ${pause.response_choice} at ${pause.response_at}`];
    case 'timed_out':
      return pause.response_choice === pause.timeout_default && pause.response_at === pause.expires_at
        ? []
        : [`timed out with ${pause.response_choice} at ${pause.response_at}`];
    default:
      return [`unknown status ${JSON.stringify(pause.status)}`];
  }
}

function checkOverdue({ pauses }: Rows, now: string): string[] {
  return pauses
    .filter((p) => p.status === 'pending' && p.expires_at <= now)
    .map((p) => `${p.id} still pending, expired at ${p.expires_at} (now ${now})`);
}

function checkDeliveries({ events, webhooks, deliveries }: Rows, observed: Observed): string[] {
  const broken: string[] = [];
  const ours = new Map(observed.webhooks.map((w) => [w.id, w]));
  const rowsOf = groupBy(deliveries, (d) => `${d.webhook_id} ${d.event_id}`);
  const received = groupBy(observed.requests, (r) => String(r.headers['x-service-delivery']));
  const expectedRows = new Set<string>();
  for (const event of events) {
    for (const webhook of webhooks) {
      const subscribed =
        webhook.developer_id === event.developer_id &&
        webhook.mode === event.mode &&
        (JSON.parse(webhook.events) as string[]).includes(event.type);
      if (!subscribed) continue;
      const what = `${event.type} of ${event.pause_id} to ${webhook.id}`;
      const found = rowsOf.get(`${webhook.id} ${event.id}`) ?? [];
      if (found.length !== 1) {
        broken.push(`${what}: ${found.length} delivery rows`);
        continue;
      }
      const row = found[0]!;
      expectedRows.add(row.id);
      if (row.status !== 'succeeded') broken.push(`${what}: delivery ${row.id} ended ${row.status}`);
      const requests = received.get(row.id) ?? [];
      if (requests.length === 0) broken.push(`${what}: delivery ${row.id} never reached the receiver`);
      const hook = ours.get(webhook.id);
      for (const request of requests) {
        const problem = hook ? requestProblem(request, hook, event.type, event.payload) : 'an unknown webhook';
        if (problem) broken.push(`${what}: delivery ${row.id} arrived with ${problem}`);
      }
    }
  }
  for (const row of deliveries) {
    if (!expectedRows.has(row.id)) broken.push(`delivery ${row.id} for no subscribed webhook and event`);
  }
  const stored = new Set(deliveries.map((d) => d.id));
  for (const id of received.keys()) {
    if (!stored.has(id)) broken.push(`received delivery ${id} that is not in the database`);
  }
  return broken;
}

/** Why a received request is not the delivery of this event to this webhook, or undefined. */
function requestProblem(request: ReceivedRequest, hook: ChaosWebhook, type: string, payload: string) {
  const signature = `sha256=${createHmac('sha256', hook.secret).update(request.body).digest('hex')}`;
  if (request.path !== hook.path) return `the path ${request.path}`;
  if (request.body.toString() !== payload) return 'another body than the event';
  if (request.headers['x-service-event'] !== type) return `X-Service-Event ${request.headers['x-service-event']}`;
  if (request.headers['x-service-signature'] !== signature) return 'a bad signature';
  return undefined;
}

function checkNotifications({ pauses, notifications }: Rows, mails: ReceivedMail[]): string[] {
  const broken: string[] = [];
  const mailsTo = groupBy(
    mails.flatMap((mail) => mail.to.map((to) => ({ to, text: mail.parsed.text ?? '' }))),
    (m) => m.to,
  );
  const rowsOf = groupBy(notifications, (n) => `${n.pause_id} ${n.recipient}`);
  const expected = new Set<string>();
  for (const pause of pauses) {
    const emails: string[] = pause.notify ? (JSON.parse(pause.notify).email ?? []) : [];
    for (const address of emails) {
      const what = `${pause.mode} ${pause.id} to ${address}`;
      const found = rowsOf.get(`${pause.id} ${address}`) ?? [];
      const delivered = (mailsTo.get(address) ?? []).filter((m) => m.text.includes(pause.id));
      expected.add(address);
      if (found.length !== 1) broken.push(`${what}: ${found.length} notification rows`);
      const wanted = pause.mode === 'live' ? 'sent' : 'suppressed';
      for (const row of found) if (row.status !== wanted) broken.push(`${what}: ${row.status}, not ${wanted}`);
      if (pause.mode === 'live' && delivered.length === 0) broken.push(`${what}: no mail arrived`);
      if (pause.mode === 'test' && (mailsTo.get(address) ?? []).length > 0) broken.push(`${what}: a mail was sent`);
    }
  }
  for (const address of mailsTo.keys()) if (!expected.has(address)) broken.push(`a mail to unknown ${address}`);
  return broken;
}

function checkAcknowledged({ pauses }: Rows, { ledger, runId }: Observed): string[] {
  const broken = ledger.unexpected.map((line) => `unexpected reply: ${line}`);
  const byId = new Map(pauses.map((p) => [p.id, p]));
  const status = (id: string) => byId.get(id)?.status ?? 'missing';
  for (const [seq, created] of ledger.created) {
    const pause = byId.get(created.id);
    const metadata = pause ? JSON.parse(pause.metadata) : undefined;
    const emails = pause?.notify ? (JSON.parse(pause.notify).email ?? []) : [];
    if (!pause || pause.mode !== created.mode || metadata.seq !== seq || `${emails}` !== `${created.email}`) {
      broken.push(`create #${seq} acknowledged as ${created.id} (${created.mode}), stored: ${JSON.stringify(pause)}`);
    }
  }
  for (const answer of ledger.answered) {
    const pause = byId.get(answer.pauseId);
    if (pause?.status !== 'responded' || pause.response_choice !== answer.choice) {
      broken.push(`answer ${answer.choice} to ${answer.pauseId} acknowledged, stored ${pause?.status}`);
    } else if (pause.response_at !== answer.responseAt) {
      broken.push(`answer to ${answer.pauseId} acknowledged at ${answer.responseAt}, stored ${pause.response_at}`);
    }
  }
  for (const id of ledger.cancelled) {
    if (status(id) !== 'cancelled') broken.push(`cancel of ${id} acknowledged, stored ${status(id)}`);
  }
  const allowed = {
    already_responded: ['responded'],
    pause_closed: ['cancelled', 'timed_out'],
    pause_not_pending: ['responded', 'cancelled', 'timed_out'],
  };
  for (const { pauseId, code } of ledger.refused) {
    if (!allowed[code].includes(status(pauseId))) broken.push(`${code} for ${pauseId}, stored ${status(pauseId)}`);
  }
  return [...broken, ...checkIdempotency(pauses, ledger, runId)];
}

/** Each create was sent with an Idempotency-Key: however often it was retried, one pause at most. */
function checkIdempotency(pauses: PauseRow[], ledger: Ledger, runId: string): string[] {
  const broken: string[] = [];
  const bySeq = groupBy(
    pauses.filter((p) => JSON.parse(p.metadata).run === runId),
    (p) => String(JSON.parse(p.metadata).seq),
  );
  for (const [seq, found] of bySeq) {
    if (found.length > 1) broken.push(`create #${seq} stored ${found.length} times: ${found.map((p) => p.id)}`);
    if (!ledger.sent.has(Number(seq))) broken.push(`pause ${found[0]!.id} for create #${seq}, never sent`);
  }
  for (const seq of ledger.undecidedCreates.keys()) broken.push(`create #${seq} never got a reply, even retried`);
  return broken;
}
