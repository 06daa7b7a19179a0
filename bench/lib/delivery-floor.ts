// The floor for bench/webhook-delivery.ts --floor on PostgreSQL, run as its
// own process (node --import tsx bench/lib/delivery-floor.ts '<json>'), as
// the service is: the least a delivery of the service's data model costs.
// It drains the parked backlog with nothing but what every delivery must do:
// claim due rows (one UPDATE ... FOR UPDATE SKIP LOCKED with their webhook
// and event, as the service's claim), sign each by both schemes
// (deliveryHeaders, the worker's own), POST it over one keep-alive undici
// Agent, `concurrency` in flight, and settle the successes with their
// attempts kept (the service's own settling statement, one out at a time).
// No framework, no fairness, no lease bookkeeping, no retries, no deadline
// or cap on the answer, no address check, one prepared statement each: a
// little less than a delivery must do. What the service spends beyond this
// is its own overhead; what this spends beyond the plain loop is the queue's.
// Its CPU is its own count over its timed answers, as the loop's is.
// Prints one line of JSON: FloorResult.

import pg from 'pg';
import { Agent, request } from 'undici';
import { responseStart } from '../../src/actions/deliveries.js';
import { SETTLE_DELIVERIES_SQL, settleDeliveriesParameters } from '../../src/store/outbox.js';
import { deliveryHeadersFor } from './delivery-headers.js';

export interface FloorInput {
  databaseUrl: string;
  secret: string;
  concurrency: number;
  /** All the parked deliveries; the first `warmup` are untimed. */
  total: number;
  warmup: number;
}

export interface FloorResult {
  /** CPU seconds (user + system) this process used from the warmup-th answer to the last. */
  cpuSeconds: number;
  deliveries: number;
}

/** Claims this many rows when fewer than half are waiting to be sent. */
const CLAIM_ROWS = 256;
const LEASE_MS = 60_000;

const CLAIM_SQL = `
with claimed as (
  update deliveries as q set attempts = q.attempts + 1, next_attempt_at = $2, updated_at = $1
  from (select d.id from deliveries as d where d.status = 'pending' and d.next_attempt_at <= $1
    order by d.next_attempt_at limit $3 for update skip locked) as picked
  where q.id = picked.id
  returning q.id, q.attempts, q.webhook_id, q.event_id
)
select claimed.id, claimed.attempts, claimed.webhook_id, webhooks.url, events.type, events.payload
from claimed
join webhooks on webhooks.id = claimed.webhook_id
join events on events.id = claimed.event_id`;

interface Claimed {
  id: string;
  attempts: number;
  webhook_id: string;
  url: string;
  type: string;
  payload: string;
}

type Sent = Parameters<typeof settleDeliveriesParameters>[0][number];

async function main(): Promise<void> {
  const input = JSON.parse(process.argv[2] ?? '') as FloorInput;
  const database = new pg.Pool({ connectionString: input.databaseUrl, max: 4 });
  // As many connections as requests in flight, as the plain loop has.
  const agent = new Agent({ connections: input.concurrency, keepAliveTimeout: 30_000, keepAliveMaxTimeout: 60_000 });
  const headersOf = deliveryHeadersFor(input.secret);
  const waiting: Claimed[] = [];
  let sent: Sent[] = [];
  let inFlight = 0;
  let claiming = false;
  let claimed = 0;
  let settling = false;
  let settled = 0;
  let answered = 0;
  /** This process's CPU at the warmup-th answer and at the last. */
  let timedFrom: NodeJS.CpuUsage | undefined;
  let timedTo: NodeJS.CpuUsage | undefined;
  let finished: () => void = () => {};
  let failed: (error: unknown) => void = () => {};
  const done = new Promise<void>((resolve, reject) => {
    finished = resolve;
    failed = reject;
  });

  const claim = () => {
    if (claiming || waiting.length >= CLAIM_ROWS / 2 || claimed >= input.total) return;
    claiming = true;
    const now = Date.now();
    database
      .query<Claimed>({
        name: 'floor-claim',
        text: CLAIM_SQL,
        values: [new Date(now).toISOString(), new Date(now + LEASE_MS).toISOString(), CLAIM_ROWS],
      })
      .then(({ rows }) => {
        claiming = false;
        claimed += rows.length;
        // Nothing due yet (the backlog not released): look again shortly.
        if (rows.length === 0) setTimeout(claim, 10);
        else {
          waiting.push(...rows);
          pump();
        }
      }, failed);
  };

  const settle = () => {
    if (settling || sent.length === 0) return;
    settling = true;
    const batch = sent;
    sent = [];
    database
      .query({
        name: 'floor-settle',
        text: SETTLE_DELIVERIES_SQL,
        values: settleDeliveriesParameters(batch, new Date().toISOString()),
      })
      .then(({ rowCount }) => {
        settling = false;
        settled += rowCount ?? 0;
        if (settled >= input.total) finished();
        else settle();
      }, failed);
  };

  const send = async (delivery: Claimed) => {
    const at = new Date();
    const started = performance.now();
    const response = await request(delivery.url, {
      dispatcher: agent,
      method: 'POST',
      headers: headersOf(delivery, at),
      body: delivery.payload,
    });
    const body = await response.body.text();
    if (response.statusCode !== 200) throw new Error(`the receiver answered ${response.statusCode}`);
    answered++;
    if (answered === input.warmup) timedFrom = process.cpuUsage();
    if (answered === input.total) timedTo = process.cpuUsage();
    sent.push({
      claim: delivery,
      statusCode: 200,
      attempt: {
        delivery_id: delivery.id,
        webhook_id: delivery.webhook_id,
        at: at.toISOString(),
        duration_ms: Math.round(performance.now() - started),
        status_code: 200,
        response_body: responseStart(body),
        error: null,
      },
    });
    settle();
  };

  function pump(): void {
    while (inFlight < input.concurrency && waiting.length > 0) {
      const delivery = waiting.shift() as Claimed;
      inFlight++;
      send(delivery).then(() => {
        inFlight--;
        pump();
      }, failed);
    }
    claim();
  }

  pump();
  await done;
  await Promise.all([agent.close(), database.end()]);
  if (!timedFrom || !timedTo) throw new Error('the floor did not see its timed span');
  const result: FloorResult = {
    cpuSeconds: (timedTo.user + timedTo.system - timedFrom.user - timedFrom.system) / 1e6,
    deliveries: input.total - input.warmup,
  };
  console.log(JSON.stringify(result));
}

await main();
