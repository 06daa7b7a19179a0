// Issue 4: webhook delivery throughput to a local keep-alive HTTPS receiver is
// at least 50% of a plain undici POST loop to the same receiver in the same
// run, and event-to-delivery latency p50/p99 is reported (goal p99 < 200 ms).
// Issue 27: on PostgreSQL at least 60%.
//
//   npx tsx bench/webhook-delivery.ts [--count=10000] [--warmup=500] [--rate=200]
//                                     [--seconds=10] [--postgres] [--cpu-prof[=<dir>]] [--floor]
//
// The receiver is test/helpers/https-receiver.ts in this process: HTTPS with a
// throw-away openssl CA, answering 200 "ok" at once, recording each request's
// arrival. The service (node dist/main.js serve) trusts that CA through
// NODE_EXTRA_CA_CERTS and may deliver to 127.0.0.0/8 (WEBHOOK_ALLOWED_NETWORKS).
// One account, its test key (no quota; test events go to test webhooks), one
// webhook for pause.cancelled.
//
// 1. Backlog. The service runs with ROLE=api (no worker): warmup + count
//    pauses are inserted into the database, then each is cancelled through
//    DELETE /v1/pause/:id, so every event, body and delivery row is the
//    service's own. The service stops; the benchmark parks the pending
//    deliveries (next_attempt_at far ahead) and starts the service again with
//    ROLE=all, ready and idle.
// 2. Throughput. The benchmark sets next_attempt_at to now: the whole backlog
//    falls due at once and the worker (batches of BATCH_SIZE, in parallel)
//    drains it. Deliveries/s = arrivals after the first `warmup` over the time
//    from the warmup-th arrival to the last. The baseline is
//    bench/lib/post-loop.ts, its own process as the service is: BATCH_SIZE
//    POSTs in flight over one keep-alive undici Agent, the same body and
//    headers as a real delivery, `warmup` untimed posts then `count` timed.
//    It runs before and after the drain; the ratio uses their mean.
// 3. Latency. With the service as it is deployed (ROLE=all), pauses are
//    cancelled through the API at a steady --rate for --seconds (open loop:
//    each DELETE is sent at its time whatever the others do). For each event,
//    latency = arrival of its whole request at the receiver minus the event's
//    envelope `timestamp`: the service's clock when the cancel transaction
//    began, so it also counts the commit. The same against the moment the
//    DELETE's answer came back is printed too. Same machine, same clock.
// 4. Floor (--floor, PostgreSQL). The service stops; the drain's deliveries are
//    parked again as they were and drained by bench/lib/delivery-floor.ts,
//    the least a delivery of this data model costs (claim, sign, POST,
//    settle with the attempt kept, raw pg), timed as the drain was; then the
//    loop runs once more. What the service spends beyond the floor is its own.
// --cpu-prof runs the draining service under the V8 profiler (its figures are
// then not the result), stops it after the drain and prints where the time went.
import { execFile } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { cpus } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import { Agent, request } from 'undici';
import { BATCH_SIZE } from '../src/actions/deliveries.js';
import type { DeliveriesTable } from '../src/store/schema.js';
import type { Store } from '../src/store/store.js';
import { type HttpsReceiver, type ReceivedRequest, startHttpsReceiver } from '../test/helpers/https-receiver.js';
import { summariseProfiles } from './lib/cpu-profile.js';
import { type CpuSampler, sampleCpu } from './lib/cpu-sampler.js';
import type { FloorInput, FloorResult } from './lib/delivery-floor.js';
import { deliveryHeadersFor } from './lib/delivery-headers.js';
import { checkFlags, numberFlag, onCleanup, parseFlags, runBenchmark, tempDir } from './lib/harness.js';
import { runLoad } from './lib/load.js';
import { insertPausesDirectly, openBenchStore } from './lib/pauses.js';
import type { PostLoopInput, PostLoopResult } from './lib/post-loop.js';
import { parentOf, readCpuSeconds, readMachineCpu } from './lib/proc.js';
import { int, machineSummary, ms, pct, table, verdict } from './lib/report.js';
import {
  type Account,
  type BenchDatabase,
  buildService,
  builtFrom,
  freshDatabase,
  ROOT,
  register,
  type ServiceProcess,
  startService,
} from './lib/service.js';
import { percentile } from './lib/stats.js';

/** Of the plain loop's posts/s: issue 4's on SQLite, issue 27's on PostgreSQL. */
const TARGET_RATIO = { sqlite: 0.5, postgres: 0.6 };
const TARGET_P99_MS = 200;
const HOOK_PATH = '/hook';
const BASELINE_PATH = '/baseline';
/** Parked deliveries wait until then; the worker polls for due rows once a second meanwhile. */
const PARKED_UNTIL = '9999-12-31T00:00:00.000Z';
const FAR_FUTURE_MS = 29 * 24 * 60 * 60 * 1000;
/** Connections for the steady cancels of the latency part. */
const CANCEL_CONNECTIONS = 16;
const execFileAsync = promisify(execFile);

runBenchmark('bench:webhooks', main, { maxMinutes: 20 });

interface Setup {
  database: BenchDatabase;
  receiver: HttpsReceiver;
  store: Store;
  account: Account;
  webhookId: string;
  secret: string;
  env: Record<string, string>;
  /** PostgreSQL's postmaster when it runs here (databaseServerOf). */
  databaseServer: number | undefined;
}

async function main(): Promise<void> {
  const flags = parseFlags();
  checkFlags(flags, ['count', 'warmup', 'rate', 'seconds', 'postgres', 'cpu-prof', 'floor']);
  const count = numberFlag(flags, 'count', 10_000);
  const warmup = numberFlag(flags, 'warmup', 500);
  const rate = numberFlag(flags, 'rate', 200);
  const seconds = numberFlag(flags, 'seconds', 10);
  if (count + warmup > 100_000 || rate > 2000 || seconds > 60) {
    throw new Error('--count + --warmup is at most 100,000, --rate at most 2,000 and --seconds at most 60');
  }
  const profileDir = profileDirOf(flags.get('cpu-prof'));
  const withFloor = flags.has('floor');
  if (withFloor && (!flags.has('postgres') || profileDir))
    throw new Error('--floor goes with --postgres, without --cpu-prof');

  console.log(`# bench:webhooks — webhook delivery against a plain undici POST loop (${BATCH_SIZE} in flight)`);
  console.log(await machineSummary());
  buildService();
  console.log(`service built from ${builtFrom()}`);
  const database = await freshDatabase(flags.has('postgres'));
  const receiver = await startHttpsReceiver();
  onCleanup(() => receiver.close());
  const env = { WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8', NODE_EXTRA_CA_CERTS: receiver.caFile };
  const store = openBenchStore(database);
  onCleanup(() => store.close());

  const api = await startService({ database, env: { ...env, ROLE: 'api' } });
  console.log(`receiver on ${receiver.url}; service pid ${api.pid} (ROLE=api) over ${database.description}`);
  const account = await register(api.url);
  const secret = randomBytes(32).toString('hex');
  const webhookId = await addWebhook(api.url, account.testKey, `${receiver.url}${HOOK_PATH}`, secret);
  const databaseServer = await databaseServerOf(database, store);
  const setup: Setup = { database, receiver, store, account, webhookId, secret, env, databaseServer };
  const fill = await makeBacklog(setup, api.url, warmup + count);
  await api.stop();
  await parkDeliveries(store);
  console.log(fill);

  const sample = await sampleDelivery(setup);
  const loopInput: PostLoopInput = {
    url: `${receiver.url}${BASELINE_PATH}`,
    body: sample.body,
    headers: sample.headers,
    concurrency: BATCH_SIZE,
    warmup,
    count,
  };
  console.log(`delivery body ${int(Buffer.byteLength(sample.body))} bytes; baseline 1 (plain undici loop)…`);
  const before = await runBaseline(setup, loopInput);

  const service = await startService({
    database,
    env: { ...env, ROLE: 'all' },
    nodeArgs: profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [],
  });
  console.log(`service restarted with ROLE=all: pid ${service.pid}; releasing ${int(warmup + count)} deliveries…`);
  const drained = await drain(setup, service, warmup, count);
  console.log('baseline 2 (plain undici loop)…');
  const after = await runBaseline(setup, loopInput);

  const latency = profileDir ? undefined : await measureLatency(setup, service, rate, seconds);
  const arrivals = [...drained.arrivals, ...(latency?.arrivals ?? [])];
  await waitUntilSettled(setup, Date.now() + 60_000);
  const check = await checkDeliveries(setup, arrivals, warmup + count + (latency?.events ?? 0));

  const target = TARGET_RATIO[database.kind];
  report({
    count,
    warmup,
    before,
    after,
    drained,
    latency,
    check,
    target,
    databaseCounted: databaseServer !== undefined,
  });
  if (profileDir) {
    console.log('\nNOTE: the service ran under --cpu-prof, which slows it; use a run without it for the figures.');
    console.log('The latency part was skipped; the profile covers start-up and the drain.');
    await service.stop();
    console.log(`\nCPU profile of the service (${profileDir}):`);
    console.log(summariseProfiles(profileDir));
  }
  if (withFloor) {
    await service.stop();
    await runFloor(setup, loopInput, warmup, count, after, drained);
  }
}

/**
 * --floor: the drain's backlog again (not the latency part's deliveries),
 * drained by bench/lib/delivery-floor.ts (the least a delivery of this data
 * model costs) with the service stopped, then the plain loop once more. The
 * deliveries are put back as they were parked for the drain, their attempts
 * deleted, after a VACUUM, so that the tables hold what they did then.
 */
async function runFloor(
  setup: Setup,
  loopInput: PostLoopInput,
  warmup: number,
  count: number,
  after: Rate,
  drained: Drained,
): Promise<void> {
  const { store, webhookId } = setup;
  const total = warmup + count;
  const ids = drained.arrivals.map((req) => String(req.headers['x-service-delivery']));
  await store.db.deleteFrom('delivery_attempts').where('webhook_id', '=', webhookId).execute();
  await sql`vacuum deliveries, delivery_attempts`.execute(store.db);
  for (let i = 0; i < ids.length; i += 1000) {
    await store.db
      .updateTable('deliveries')
      .set({
        status: 'pending',
        attempts: 0,
        next_attempt_at: PARKED_UNTIL,
        last_status_code: null,
        completed_at: null,
      })
      .where('id', 'in', ids.slice(i, i + 1000))
      .execute();
  }
  const input: FloorInput = {
    databaseUrl: setup.database.url,
    secret: setup.secret,
    concurrency: BATCH_SIZE,
    total,
    warmup,
  };
  console.log(`\nfloor: ${int(total)} deliveries put back; bench/lib/delivery-floor.ts drains them…`);
  const floor = execFileAsync(
    process.execPath,
    ['--import', 'tsx', join(ROOT, 'bench/lib/delivery-floor.ts'), JSON.stringify(input)],
    { env: { ...process.env, NODE_EXTRA_CA_CERTS: setup.receiver.caFile }, timeout: 5 * 60_000, cwd: ROOT },
  );
  const timed = await releaseBacklog(setup, floor.child.pid!, warmup, count);
  const result = JSON.parse((await floor).stdout.trim().split('\n').pop() ?? '') as FloorResult;
  const shares = { ...timed.shares, sender: result.cpuSeconds / result.deliveries };
  console.log('baseline 3 (plain undici loop)…');
  const last = await runBaseline(setup, loopInput);
  const loop = (after.perSecond + last.perSecond) / 2;
  const row = (name: string, rate: number, cpu: CpuShares) => [
    name,
    int(rate),
    pct(rate / loop),
    us(cpu.sender),
    us(cpu.receiver),
    us(cpu.database),
    us(cpu.machine),
    pct(cpu.machineBusy),
  ];
  console.log('');
  console.log(
    table(
      ['drain (timed span)', 'messages/s', 'of the loop', 'sender', 'receiver', 'PostgreSQL', 'whole machine', 'busy'],
      [
        row('service', drained.perSecond, drained.shares),
        row('floor (claim, sign, POST, settle)', timed.perSecond, shares),
        row('plain loop, after the floor', last.perSecond, last.shares),
      ],
    ),
  );
  console.log(
    `RESULT floor: ${int(timed.perSecond)} deliveries/s = ${pct(timed.perSecond / loop)} of the plain loop ` +
      `(${int(after.perSecond)} and ${int(last.perSecond)} posts/s, the runs around it; ${timed.connections} ` +
      `connections); the service drained ${pct(drained.perSecond / timed.perSecond)} of the floor's rate`,
  );
}

/** --cpu-prof profiles into a temp folder removed at the end; --cpu-prof=<dir> keeps the .cpuprofile there. */
function profileDirOf(flag: string | undefined): string | undefined {
  if (flag === undefined) return undefined;
  if (flag === 'true') return tempDir('pausepoint-cpuprof');
  const dir = resolve(flag);
  mkdirSync(dir, { recursive: true });
  return dir;
}

async function addWebhook(baseUrl: string, key: string, url: string, secret: string): Promise<string> {
  const response = await fetch(`${baseUrl}/v1/webhooks`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ url, events: ['pause.cancelled'], secret }),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await response.text();
  if (response.status !== 201) throw new Error(`POST /v1/webhooks answered ${response.status}: ${text}`);
  return (JSON.parse(text) as { id: string }).id;
}

/** Inserts `total` pending test pauses and returns their ids. */
async function pendingPauses(setup: Setup, total: number, title: string): Promise<string[]> {
  await insertPausesDirectly(setup.store, {
    developerId: setup.account.developerId,
    mode: 'test',
    count: total,
    expiresAt: new Date(Date.now() + FAR_FUTURE_MS).toISOString(),
    title,
  });
  const rows = await setup.store.db
    .selectFrom('pauses')
    .select('id')
    .where('developer_id', '=', setup.account.developerId)
    .where('title', '=', title)
    .where('status', '=', 'pending')
    .execute();
  if (rows.length !== total)
    throw new Error(`expected ${total} pending pauses titled "${title}", found ${rows.length}`);
  return rows.map((row) => row.id);
}

/** Cancels every pause through DELETE /v1/pause/:id, 10 connections; with ROLE=api nothing is delivered yet. */
async function makeBacklog(setup: Setup, baseUrl: string, total: number): Promise<string> {
  const ids = await pendingPauses(setup, total, 'Backlog');
  let next = 0;
  const figures = await runLoad({
    title: 'backlog cancels',
    url: baseUrl,
    headers: { authorization: `Bearer ${setup.account.testKey}` },
    requests: [{ method: 'DELETE', setupRequest: (req) => ({ ...req, path: `/v1/pause/${ids[next++]}` }) }],
    amount: total,
  });
  const pending = await countDeliveries(setup, 'pending');
  if (pending !== total) throw new Error(`expected ${total} pending deliveries after the cancels, found ${pending}`);
  return (
    `backlog: ${int(total)} pauses inserted, then cancelled through DELETE /v1/pause/:id (ROLE=api, ` +
    `${int(figures.rps)} req/s): ${int(pending)} pending deliveries, parked`
  );
}

async function countDeliveries(setup: Setup, status: DeliveriesTable['status']): Promise<number> {
  const row = await setup.store.db
    .selectFrom('deliveries')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('webhook_id', '=', setup.webhookId)
    .where('status', '=', status)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Moves every pending delivery's next attempt (a benchmark-only touch of the queue column). */
async function setNextAttempt(store: Store, at: string): Promise<void> {
  await store.db.updateTable('deliveries').set({ next_attempt_at: at }).where('status', '=', 'pending').execute();
}

const parkDeliveries = (store: Store) => setNextAttempt(store, PARKED_UNTIL);

/**
 * A real stored delivery body and the headers the worker sends with it, made
 * by the worker's own deliveryHeaders (SPEC's and Standard Webhooks'), and its
 * user-agent (src/net/safe-client.ts): the loop's posts cost the sender and
 * the receiver what a delivery's do.
 */
async function sampleDelivery(setup: Setup): Promise<{ body: string; headers: Record<string, string> }> {
  const row = await setup.store.db
    .selectFrom('deliveries')
    .innerJoin('events', 'events.id', 'deliveries.event_id')
    .select(['deliveries.id', 'events.type', 'events.payload'])
    .where('deliveries.webhook_id', '=', setup.webhookId)
    .executeTakeFirstOrThrow();
  return { body: row.payload, headers: deliveryHeadersFor(setup.secret)(row, new Date()) };
}

const sign = (secret: string, body: string | Buffer) =>
  `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

interface Rate {
  perSecond: number;
  /** CPU seconds of the sending process per message. */
  cpuPerMessage: number;
  /** Connections the receiver accepted. */
  connections: number;
  /** Where CPU went in the timed span, per message. */
  shares: CpuShares;
}

/** CPU a message in the timed span, by process (seconds), and how busy the whole machine was. */
interface CpuShares {
  sender: number;
  /** This process: the receiver, the CPU sampler and, during a drain, the polls for its end. */
  receiver: number;
  /** PostgreSQL's processes (the service's backends among them); 0 for SQLite, which runs in the service. */
  database: number;
  machine: number;
  /** Of all the machine's cores. */
  machineBusy: number;
}

/** The CPU a message from the timed arrivals' first to their last, read off the sampler. */
function cpuShares(sampler: CpuSampler, arrivals: ReceivedRequest[], warmup: number): CpuShares {
  const at = arrivals.map((req) => req.receivedAt);
  const span = sampler.between(at[warmup - 1]!, at[at.length - 1]!);
  const messages = at.filter((time) => time > span.from && time <= span.to).length;
  return {
    sender: span.watched / messages,
    receiver: span.self / messages,
    database: span.database / messages,
    machine: span.machine / messages,
    machineBusy: span.machine / span.seconds / cpus().length,
  };
}

/**
 * PostgreSQL's postmaster, the parent of this benchmark's backend, when it runs
 * on this machine; undefined for SQLite (it runs in the service) or a server
 * elsewhere. Its whole cluster is counted: run nothing else on it meanwhile.
 */
async function databaseServerOf(database: BenchDatabase, store: Store): Promise<number | undefined> {
  if (database.kind !== 'postgres') return undefined;
  const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(store.db);
  return parentOf(Number(rows[0]?.pid));
}

async function runBaseline(setup: Setup, input: PostLoopInput): Promise<Rate> {
  const { receiver } = setup;
  receiver.reset();
  const loop = execFileAsync(
    process.execPath,
    ['--import', 'tsx', join(ROOT, 'bench/lib/post-loop.ts'), JSON.stringify(input)],
    { env: { ...process.env, NODE_EXTRA_CA_CERTS: receiver.caFile }, timeout: 5 * 60_000, cwd: ROOT },
  );
  const sampler = sampleCpu({ watched: loop.child.pid!, databaseServer: setup.databaseServer });
  const { stdout } = await loop.finally(() => sampler.stop());
  const result = JSON.parse(stdout.trim().split('\n').pop() ?? '') as PostLoopResult;
  if (result.non2xx > 0) throw new Error(`baseline: ${result.non2xx} answers were not 2xx`);
  const arrived = receiver.requests.length;
  if (arrived !== input.warmup + input.count) throw new Error(`baseline: the receiver got ${arrived} posts`);
  const figures = {
    perSecond: result.posts / result.seconds,
    cpuPerMessage: result.cpuSeconds / result.posts,
    connections: receiver.connections,
    // The loop reports its own CPU over the timed posts; it has exited by the sampler's last reading.
    shares: { ...cpuShares(sampler, receiver.requests, input.warmup), sender: result.cpuSeconds / result.posts },
  };
  console.log(
    `  ${int(figures.perSecond)} posts/s, ${int(figures.cpuPerMessage * 1e6)} µs CPU a post, ${figures.connections} connections`,
  );
  return figures;
}

interface Drained extends Rate {
  /** Deliveries/s over all arrivals, warm-up included. */
  overallPerSecond: number;
  /** From the release to the first arrival: the worker's poll (up to 1 s, as nothing woke it). */
  pickupMs: number;
  /** From the first arrival to the last. */
  spanMs: number;
  /** From the release until no delivery was pending: every arrival recorded as succeeded. */
  settledMs: number;
  /** Share of one core the service used from the release until settled. */
  serviceCpu: number;
  arrivals: ReceivedRequest[];
}

/** Releases the parked backlog and times the worker draining it. */
async function drain(setup: Setup, service: ServiceProcess, warmup: number, count: number): Promise<Drained> {
  const cpuBefore = readCpuSeconds(service.pid);
  const timed = await releaseBacklog(setup, service.pid, warmup, count);
  const cpu = readCpuSeconds(service.pid) - cpuBefore;
  const drained: Drained = {
    ...timed,
    cpuPerMessage: cpu / (warmup + count),
    serviceCpu: cpu / (timed.settledMs / 1000),
  };
  console.log(
    `  ${int(drained.perSecond)} deliveries/s after the first ${int(warmup)}; all ${int(warmup + count)} settled ` +
      `${ms(drained.settledMs)} after the release`,
  );
  return drained;
}

/**
 * Releases the parked backlog (every pending delivery due now) and times
 * whoever drains it (`sender`, a process id), from the receiver's arrivals
 * and the CPU sampler, until no delivery is pending.
 */
async function releaseBacklog(
  setup: Setup,
  sender: number,
  warmup: number,
  count: number,
): Promise<Omit<Drained, 'cpuPerMessage' | 'serviceCpu'>> {
  const { receiver, store } = setup;
  const total = warmup + count;
  receiver.reset();
  const sampler = sampleCpu({ watched: sender, databaseServer: setup.databaseServer });
  const released = Date.now();
  await setNextAttempt(store, new Date(released).toISOString());
  const arrivals = (await receiver.waitForRequests(total, 5 * 60_000)).filter((req) => req.path === HOOK_PATH);
  if (arrivals.length !== total) throw new Error(`drain: expected ${total} deliveries, got ${arrivals.length}`);
  const settled = await waitUntilSettled(setup, released + 5 * 60_000);
  sampler.stop();
  const at = arrivals.map((req) => req.receivedAt);
  const first = at[0]!;
  const last = at[total - 1]!;
  return {
    perSecond: count / ((last - at[warmup - 1]!) / 1000),
    overallPerSecond: total / ((last - first) / 1000),
    connections: receiver.connections,
    shares: cpuShares(sampler, arrivals, warmup),
    pickupMs: first - released,
    spanMs: last - first,
    settledMs: settled - released,
    arrivals,
  };
}

/** Polls every 50 ms until no delivery of the webhook is pending; returns when that was seen. */
async function waitUntilSettled(setup: Setup, deadline: number): Promise<number> {
  while (Date.now() < deadline) {
    if ((await countDeliveries(setup, 'pending')) === 0) return Date.now();
    await sleep(50);
  }
  throw new Error('deliveries were still pending at the deadline');
}

interface Latency {
  events: number;
  /** Achieved DELETE rate. */
  sentPerSecond: number;
  /** Arrival − envelope timestamp, ms. */
  fromEvent: number[];
  /** Arrival − the DELETE's answer, ms. */
  fromAnswer: number[];
  /** The DELETE's own latency, ms. */
  api: number[];
  arrivals: ReceivedRequest[];
  /** Cores' worth of CPU the service, and the whole machine, used meanwhile. */
  serviceCpu: number;
  machineBusy: number;
}

/** Cancels pauses through the API at a steady rate and times each event to its arrival at the receiver. */
async function measureLatency(setup: Setup, service: ServiceProcess, rate: number, seconds: number): Promise<Latency> {
  const total = Math.round(rate * seconds);
  const ids = await pendingPauses(setup, total, 'Steady');
  setup.receiver.reset();
  console.log(`latency: cancelling ${int(total)} pauses at ${rate}/s through the API…`);
  const started = performance.now();
  const machineBefore = readMachineCpu();
  const serviceBefore = readCpuSeconds(service.pid);
  const { answeredAt, api, sentPerSecond } = await cancelAtRate(setup, service.url, ids, rate);
  const arrivals = (await setup.receiver.waitForRequests(total, 60_000)).filter((req) => req.path === HOOK_PATH);
  const wall = (performance.now() - started) / 1000;
  const machineAfter = readMachineCpu();
  const serviceCpu = (readCpuSeconds(service.pid) - serviceBefore) / wall;
  const machineBusy = (machineAfter.busy - machineBefore.busy) / wall;
  const fromEvent: number[] = [];
  const fromAnswer: number[] = [];
  for (const arrival of arrivals) {
    const envelope = JSON.parse(arrival.body.toString('utf8')) as { pause_id: string; timestamp: string };
    fromEvent.push(arrival.receivedAt - Date.parse(envelope.timestamp));
    fromAnswer.push(arrival.receivedAt - answeredAt.get(envelope.pause_id)!);
  }
  return { events: total, sentPerSecond, fromEvent, fromAnswer, api, arrivals, serviceCpu, machineBusy };
}

/**
 * Open loop: the i-th DELETE is issued at start + i/rate, whether or not
 * earlier ones have been answered. At most CANCEL_CONNECTIONS are open; if the
 * service falls behind, the rest wait in the client (the achieved rate shows it).
 */
async function cancelAtRate(setup: Setup, baseUrl: string, ids: string[], rate: number) {
  const agent = new Agent({ connections: CANCEL_CONNECTIONS, keepAliveTimeout: 30_000 });
  const answeredAt = new Map<string, number>();
  const api: number[] = [];
  const inFlight: Promise<void>[] = [];
  const cancel = async (id: string) => {
    const sent = performance.now();
    const response = await request(`${baseUrl}/v1/pause/${id}`, {
      dispatcher: agent,
      method: 'DELETE',
      headers: { authorization: `Bearer ${setup.account.testKey}` },
    });
    await response.body.text();
    answeredAt.set(id, Date.now());
    api.push(performance.now() - sent);
    if (response.statusCode !== 200) throw new Error(`DELETE /v1/pause/${id} answered ${response.statusCode}`);
  };
  // Caught at once, so that a failure mid-run is not an unhandled rejection; the first is thrown at the end.
  const failures: unknown[] = [];
  const start = performance.now();
  for (let i = 0; i < ids.length; i++) {
    const wait = start + (i * 1000) / rate - performance.now();
    if (wait > 1) await sleep(wait);
    inFlight.push(cancel(ids[i]!).catch((error: unknown) => void failures.push(error)));
  }
  const sentPerSecond = ids.length / ((performance.now() - start) / 1000);
  await Promise.all(inFlight);
  await agent.close();
  if (failures.length > 0) throw failures[0];
  return { answeredAt, api, sentPerSecond };
}

interface Check {
  succeeded: number;
  other: number;
  duplicates: number;
  badSignatures: number;
}

/** Once none is pending: every delivery was made, succeeded, arrived once and was correctly signed. */
async function checkDeliveries(setup: Setup, hooks: ReceivedRequest[], expected: number): Promise<Check> {
  const succeeded = await countDeliveries(setup, 'succeeded');
  const all = await setup.store.db
    .selectFrom('deliveries')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('webhook_id', '=', setup.webhookId)
    .executeTakeFirstOrThrow();
  const ids = new Set(hooks.map((req) => String(req.headers['x-service-delivery'])));
  const badSignatures = hooks.filter((req) => !signedWith(setup.secret, req)).length;
  if (Number(all.n) !== expected) throw new Error(`expected ${expected} deliveries in all, found ${all.n}`);
  return { succeeded, other: Number(all.n) - succeeded, duplicates: hooks.length - ids.size, badSignatures };
}

const signedWith = (secret: string, req: ReceivedRequest) =>
  req.headers['x-service-signature'] === sign(secret, req.body);

function report(input: {
  count: number;
  warmup: number;
  before: Rate;
  after: Rate;
  drained: Drained;
  latency: Latency | undefined;
  check: Check;
  /** The throughput ratio to reach. */
  target: number;
  /** Whether PostgreSQL's processes were costed (it runs on this machine). */
  databaseCounted: boolean;
}): void {
  const { count, warmup, before, after, drained, latency, check } = input;
  const baseline = (before.perSecond + after.perSecond) / 2;
  const ratio = drained.perSecond / baseline;
  const baselineCpu = (before.cpuPerMessage + after.cpuPerMessage) / 2;
  console.log('');
  console.log(
    table(
      ['run', 'messages/s', 'CPU a message', 'connections'],
      [
        [
          `plain undici loop, before (${BATCH_SIZE} in flight)`,
          int(before.perSecond),
          us(before.cpuPerMessage),
          before.connections,
        ],
        ['service worker drain', int(drained.perSecond), us(drained.cpuPerMessage), drained.connections],
        [
          `plain undici loop, after (${BATCH_SIZE} in flight)`,
          int(after.perSecond),
          us(after.cpuPerMessage),
          after.connections,
        ],
      ],
    ),
  );
  console.log('');
  console.log(
    `drain of ${int(count + warmup)}: first arrival ${ms(drained.pickupMs)} after the release (the worker's ` +
      `once-a-second poll), last ${ms(drained.spanMs)} after the first (${int(drained.overallPerSecond)}/s with the ` +
      `warm-up); all settled ${ms(drained.settledMs)} after the release; service CPU ${pct(drained.serviceCpu)} of one core`,
  );
  console.log(
    `CPU a message: service ${us(drained.cpuPerMessage)} (claim, load, sign, POST, settle) against ` +
      `${us(baselineCpu)} for the plain loop: ${pct(baselineCpu / drained.cpuPerMessage)}, the ratio if both were CPU-bound`,
  );
  reportCpuShares(before, drained, after, input.databaseCounted);
  console.log(
    `deliveries: ${int(check.succeeded)} succeeded, ${int(check.other)} other, ${int(check.duplicates)} repeated, ` +
      `${int(check.badSignatures)} bad signatures`,
  );
  if (latency) reportLatency(latency);
  console.log(
    `RESULT throughput: ${int(drained.perSecond)} deliveries/s = ${pct(ratio)} of the plain undici loop ` +
      `(${int(before.perSecond)} and ${int(after.perSecond)} posts/s, mean ${int(baseline)}) ` +
      `(target >= ${pct(input.target)}): ${verdict(ratio >= input.target && check.other === 0)}`,
  );
  if (latency) {
    const p99 = percentile(latency.fromEvent, 99);
    console.log(
      `RESULT latency: event to delivery p50 ${ms(percentile(latency.fromEvent, 50))}, p99 ${ms(p99)}, ` +
        `max ${ms(Math.max(...latency.fromEvent))} at ${int(latency.sentPerSecond)} events/s ` +
        `(goal p99 < ${TARGET_P99_MS} ms): ${verdict(p99 < TARGET_P99_MS)}`,
    );
  }
}

/**
 * Each run's CPU a message by process over its timed span, and what
 * PostgreSQL's share alone allows a service that spent no more than the loop.
 */
function reportCpuShares(before: Rate, drained: Drained, after: Rate, databaseCounted: boolean): void {
  const row = (name: string, { shares }: Rate) => [
    name,
    us(shares.sender),
    us(shares.receiver),
    databaseCounted ? us(shares.database) : 'n/a',
    us(shares.machine),
    pct(shares.machineBusy),
  ];
  console.log('');
  console.log(
    table(
      ['timed span: CPU a message', 'sender', 'receiver (this process)', 'PostgreSQL', 'whole machine', 'machine busy'],
      [row('plain loop, before', before), row('service drain', drained), row('plain loop, after', after)],
    ),
  );
  if (!databaseCounted) return;
  const database = drained.shares.database;
  const loopCpu = (before.shares.machine + after.shares.machine) / 2;
  const loopBusy = (before.shares.machineBusy + after.shares.machineBusy) / 2;
  const atLoopsUse = loopCpu / (loopCpu + database);
  console.log(
    `A post of the plain loop takes ${us(loopCpu)} of the machine's CPU; a delivery also takes ${us(database)} of ` +
      `PostgreSQL's (claim, settle, the attempt kept). A service that spent no more than the loop's sender would ` +
      `reach at most ${pct(atLoopsUse)} of the loop with the machine as busy as the loop keeps it ` +
      `(${pct(loopBusy)}), and ${pct(atLoopsUse / loopBusy)} with every core busy.`,
  );
}

function reportLatency(latency: Latency): void {
  const row = (name: string, values: number[]) => [
    name,
    ms(percentile(values, 50)),
    ms(percentile(values, 99)),
    ms(Math.max(...values)),
  ];
  console.log('');
  console.log(
    `latency: ${int(latency.events)} cancels sent at ${int(latency.sentPerSecond)}/s, ` +
      `${int(latency.fromEvent.length)} deliveries arrived; meanwhile the service used ${pct(latency.serviceCpu)} ` +
      `of a core and the whole machine ${pct(latency.machineBusy)} (of ${cpus().length * 100}%)`,
  );
  console.log(
    table(
      ['figure', 'p50', 'p99', 'max'],
      [
        row('event to delivery: arrival − envelope timestamp', latency.fromEvent),
        row('answer to delivery: arrival − DELETE answered', latency.fromAnswer),
        row('DELETE /v1/pause/:id round trip', latency.api),
      ],
    ),
  );
  console.log(
    'The envelope timestamp is the service clock when the cancel transaction began; arrival is when the whole ' +
      'request had reached the receiver (Date.now(), same machine, whole milliseconds).',
  );
}

const us = (seconds: number) => `${int(seconds * 1e6)} µs`;
