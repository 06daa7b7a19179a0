// Issue 8: create-pause, respond and get throughput and latency against two
// baselines measured in the same run: a bare Fastify hello-world route and a
// loop of the same database work with the plain driver. Goals: create and
// respond each >= 40% of hello-world's req/s; on PostgreSQL two instances
// >= 1.6x one. Issue 16: a single answer (respond) and a reviewer's vote
// (vote) each >= 60% of create's req/s in the same run, on SQLite. Issue 24:
// against the bare POST (a bare Fastify route parsing the same JSON body and
// answering a small object, no schemas: DESIGN.md, "How performance is
// measured"), create >= 40% and a read (get) >= 50%, the read also printed
// against the bare GET; respond and vote >= 60% of create, on SQLite. Issue 25:
// a create with a form >= 80% of one without, and an answer with a form's
// values >= 60% of a create, on SQLite.
//
//   npx tsx bench/api-throughput.ts [--rounds=2] [--duration=10] [--warmup=2]
//                                   [--connections=10] [--postgres] [--instances=1|2]
//                                   [--operations=create,respond,vote,decide,get,create-form,respond-form]
//                                   [--cpu-prof[=<dir>]]
//                                   [--skip-raw]
//
// The service (node dist/main.js serve) and each baseline run as their own
// processes; autocannon runs here, `connections` in all.
//   create   POST /v1/pause with the test key, {title, body, expires_in, metadata}.
//   respond  POST /v1/respond/{token} {"choice":"approve"}: before each run a
//            pool of pending pauses is inserted into the database, and every
//            request takes the next token, so each answers a fresh pause (an
//            answered one would be 409, which fails the run).
//   vote     POST /v1/respond/{reviewer token} {"choice":"approve"}, a vote that
//            does not decide: the pool's pauses have 2 reviewers and quorum 2,
//            and each request is the first reviewer's vote on a fresh pause.
//   decide   the same, the vote that decides: in this pool the first reviewer
//            has already voted approve, and each request is the second's.
//   get      GET /v1/pause/{id} with the test key, ids at random from the
//            respond pools.
//   create-form   create with a form of four fields and proposed values
//            (FORM below): the schema is the same in every request, as a
//            program's would be.
//   respond-form  respond to pauses with that form, sending edited values,
//            which the service validates against the schema.
// Baselines per round, each in its own process: hello-world GET / and the
// bare POST /bare (bench/hello-world.ts), and bench/lib/raw-db-loop.ts doing
// each operation's database work with the plain driver (see there; it has no
// vote, so vote and decide have no raw figure; --skip-raw leaves it out).
// A round runs the bare GET, the bare POST, then each operation, one after
// the other, so drift in the machine's load hits baselines and service alike. With --instances=2 (PostgreSQL only) a second
// service runs on the same database, and each operation is measured against
// one instance and then against both at once (two autocannons, the same
// connections shared out), so the ratio two/one comes from the same round.
// --cpu-prof runs the service(s) under the V8 profiler (slower: its figures
// are not the result) and prints where the time went; with --operations=respond
// (say) the profile is of that operation alone.
import { sql } from 'kysely';
import type { Form } from '../src/domain/form.js';
import { runRawLoop, startHelloWorld } from './lib/baselines.js';
import { profileArgs, profileDirectory, summariseProfiles } from './lib/cpu-profile.js';
import { checkFlags, numberFlag, parseFlags, runBenchmark } from './lib/harness.js';
import { runLoad, runLoadAcross } from './lib/load.js';
import { MEASURED_HEADER, type Measured, measured, measuredCells } from './lib/measure.js';
import { insertPausesDirectly, insertReviewedPausesDirectly, openBenchStore, titlesIndexed } from './lib/pauses.js';
import type { RawLoopResult, RawOperation } from './lib/raw-db-loop.js';
import { int, machineSummary, pct, table, verdict } from './lib/report.js';
import {
  type Account,
  type BenchDatabase,
  buildService,
  builtFrom,
  freshDatabase,
  register,
  responseTokenFor,
  reviewerTokenFor,
  type ServiceProcess,
  startService,
} from './lib/service.js';
import { median } from './lib/stats.js';

const TARGET_HELLO_RATIO = 0.4;
/** Issue 24: create and a read against the bare POST. */
const TARGET_BARE_POST_RATIO: Partial<Record<Operation, number>> = { create: 0.4, get: 0.5 };
const TARGET_CREATE_RATIO = 0.6;
const TARGET_SCALING = 1.6;
type Operation = RawOperation | 'vote' | 'decide' | 'create-form' | 'respond-form';
const OPERATIONS: Operation[] = ['create', 'respond', 'vote', 'decide', 'get', 'create-form', 'respond-form'];
/** The operations that POST to /v1/respond/{token}, each on a fresh pause from its own pool. */
type Answering = 'respond' | 'vote' | 'decide' | 'respond-form';
const RAW_OPERATIONS: readonly Operation[] = ['create', 'respond', 'get'] satisfies RawOperation[];
const isRaw = (operation: Operation): operation is RawOperation => RAW_OPERATIONS.includes(operation);
/** Issue 25: each against create in the same round. */
const TARGET_FORM_RATIO: Partial<Record<Operation, number>> = { 'create-form': 0.8, 'respond-form': 0.6 };
/** The raw loop's creates stop here even if its time is not up, so the table does not balloon. */
const RAW_MAX_ROWS = 100_000;
const FAR_FUTURE_MS = 29 * 24 * 60 * 60 * 1000;
const CREATE_BODY = JSON.stringify({
  title: 'Deploy build 1234 to production?',
  body: 'Tests passed; 3 files changed.',
  expires_in: 3600,
  metadata: { build: 1234 },
});

/** A refund a human may correct: the kinds of field a form most often has. */
const FORM: Form = {
  schema: {
    type: 'object',
    properties: {
      amount: { type: 'number', title: 'Amount (EUR)', minimum: 0, maximum: 10_000 },
      reason: { type: 'string', title: 'Reason', maxLength: 500, 'x-multiline': true },
      method: { type: 'string', title: 'Refund to', enum: ['card', 'bank', 'credit'] },
      notify_customer: { type: 'boolean', title: 'Tell the customer' },
    },
    required: ['amount', 'method'],
  },
  values: { amount: 120, reason: 'Damaged in transit', method: 'card', notify_customer: true },
  on: ['approve'],
};
const CREATE_FORM_BODY = JSON.stringify({ ...JSON.parse(CREATE_BODY), form: FORM });
/** An approval that changes two of the proposed values. */
const RESPOND_FORM_BODY = JSON.stringify({
  choice: 'approve',
  values: { ...FORM.values, amount: 80, notify_customer: false },
});

runBenchmark('bench:api', main, { maxMinutes: 20 });

interface Setup {
  database: BenchDatabase;
  operations: Operation[];
  services: ServiceProcess[];
  account: Account;
  store: ReturnType<typeof openBenchStore>;
  connections: number;
  /** Ids of the pauses inserted for respond runs, for get. */
  ids: string[];
  /** The highest rate of each answering operation seen so far, to size its next pool. */
  rates: Record<Answering, number>;
}

interface Round {
  hello: Measured;
  /** The bare POST: the same JSON body parsed, a small object answered, no schemas. */
  bare: Measured;
  /** Per operation: against one instance, and with --instances=2 against both. */
  one: Record<Operation, Measured>;
  two?: Record<Operation, Measured>;
  /** Empty with --skip-raw. */
  raw: Partial<Record<RawOperation, RawLoopResult>>;
  /** The floor read (bench/hello-world.ts GET /floor/:id) over the get run's pauses: SQLite runs of get only. */
  floor?: Measured;
}

async function main(): Promise<void> {
  const flags = parseFlags();
  checkFlags(flags, [
    'rounds',
    'duration',
    'warmup',
    'connections',
    'postgres',
    'instances',
    'operations',
    'cpu-prof',
    'skip-raw',
  ]);
  const rounds = numberFlag(flags, 'rounds', 2);
  const duration = numberFlag(flags, 'duration', 10);
  const warmup = numberFlag(flags, 'warmup', 2);
  const connections = numberFlag(flags, 'connections', 10);
  const instances = numberFlag(flags, 'instances', 1);
  const postgres = flags.has('postgres');
  const skipRaw = flags.has('skip-raw');
  const operations = (flags.get('operations') ?? OPERATIONS.join(',')).split(',') as Operation[];
  if (operations.some((op) => !OPERATIONS.includes(op))) throw new Error(`--operations is a list of ${OPERATIONS}`);
  if (rounds > 10 || duration > 60) throw new Error('--rounds is at most 10 and --duration at most 60');
  if (instances !== 1 && instances !== 2) throw new Error('--instances is 1 or 2');
  if (instances === 2 && !postgres)
    throw new Error('--instances=2 needs --postgres (SQLite is one machine, one writer)');

  console.log('# bench:api — create, respond, vote and get against hello-world, a raw driver loop and create');
  console.log(await machineSummary());
  buildService();
  console.log(`service built from ${builtFrom()}`);
  const database = await freshDatabase(postgres);
  const services: ServiceProcess[] = [];
  // One after the other, so the second finds the migrations done.
  const profileDir = profileDirectory(flags.get('cpu-prof'));
  for (let i = 0; i < instances; i++) {
    services.push(await startService({ database, nodeArgs: profileArgs(profileDir) }));
  }
  const account = await register(services[0]!.url);
  // The floor read needs the pauses table, so the baseline starts once the service has migrated.
  const sqliteFile = database.kind === 'sqlite' ? database.url.slice('sqlite:'.length) : undefined;
  const hello = await startHelloWorld(sqliteFile ? { sqliteFile, apiKey: account.testKey } : undefined);
  const store = openBenchStore(database);
  const setup: Setup = {
    database,
    operations,
    services,
    account,
    store,
    connections,
    ids: [],
    rates: { respond: 0, vote: 0, decide: 0, 'respond-form': 0 },
  };
  console.log(
    `service pid ${services.map((s) => `${s.pid} on ${s.url}`).join(', ')} over ${database.description}; ` +
      `hello-world pid ${hello.pid}; ${connections} connections`,
  );
  try {
    console.log(`warm-up: ${warmup} s each`);
    await runLoad({ title: 'warm-up hello', url: `${hello.url}/`, connections, duration: warmup });
    await runLoad({ ...barePost(hello.url), title: 'warm-up bare POST', connections, duration: warmup });
    for (const operation of operations) await runOperation(setup, operation, services, warmup);

    const results: Round[] = [];
    for (let round = 1; round <= rounds; round++) {
      console.log(`round ${round}/${rounds}: ${duration} s per run`);
      results.push(await runRound(setup, hello, duration, skipRaw));
    }
    report(results, operations, instances, postgres, skipRaw);
  } finally {
    await store.close();
  }
  if (profileDir) {
    console.log('\nNOTE: the service ran under --cpu-prof, which slows it; use a run without it for the figures.');
    await Promise.all(services.map((service) => service.stop()));
    console.log(`\nCPU profile of the service (${profileDir}):`);
    console.log(summariseProfiles(profileDir));
  }
}

/** POST /bare of bench/hello-world.ts with create's JSON body. */
const barePost = (helloUrl: string) => ({
  url: `${helloUrl}/bare`,
  method: 'POST' as const,
  headers: { 'content-type': 'application/json' },
  body: CREATE_BODY,
});

async function runRound(
  setup: Setup,
  baseline: { pid: number; url: string },
  seconds: number,
  skipRaw: boolean,
): Promise<Round> {
  const { connections, services } = setup;
  const hello = await measured([baseline.pid], () =>
    runLoad({ title: 'hello-world', url: `${baseline.url}/`, connections, duration: seconds }),
  );
  const bare = await measured([baseline.pid], () =>
    runLoad({ ...barePost(baseline.url), title: 'bare POST', connections, duration: seconds }),
  );
  const one = {} as Record<Operation, Measured>;
  const two = services.length > 1 ? ({} as Record<Operation, Measured>) : undefined;
  for (const operation of setup.operations) {
    one[operation] = await runOperation(setup, operation, services.slice(0, 1), seconds);
    if (two) two[operation] = await runOperation(setup, operation, services, seconds);
  }
  const floor =
    one.get && setup.database.kind === 'sqlite'
      ? await measured([baseline.pid], () => readFloor(setup, baseline.url, seconds))
      : undefined;
  if (skipRaw) return { hello, bare, one, two, raw: {}, floor };
  const rawResults = await runRawLoop({
    database: setup.database,
    pause: rawPause(setup.account.developerId),
    concurrency: connections,
    seconds,
    maxRows: RAW_MAX_ROWS,
    // create first always: the other two work on the rows it inserts.
    operations: ['create', ...setup.operations.filter(isRaw).filter((op) => op !== 'create')],
  });
  const raw = Object.fromEntries(rawResults.map((r) => [r.operation, r])) as Record<RawOperation, RawLoopResult>;
  return { hello, bare, one, two, raw, floor };
}

/** The floor read: GET /floor/:id of bench/hello-world.ts on the pauses get reads, with the same key. */
const readFloor = (setup: Setup, helloUrl: string, seconds: number) =>
  runLoad({
    title: 'floor read',
    url: helloUrl,
    connections: setup.connections,
    duration: seconds,
    headers: { authorization: `Bearer ${setup.account.testKey}` },
    requests: [
      {
        method: 'GET',
        setupRequest: (request) => ({
          ...request,
          path: `/floor/${setup.ids[Math.floor(Math.random() * setup.ids.length)]}`,
        }),
      },
    ],
  });

/** One timed run of an operation against `targets`, measured for CPU. */
async function runOperation(
  setup: Setup,
  operation: Operation,
  targets: ServiceProcess[],
  seconds: number,
): Promise<Measured> {
  const title = `${operation} × ${targets.length} instance${targets.length > 1 ? 's' : ''}`;
  const pids = targets.map((t) => t.pid);
  const urls = targets.map((t) => t.url);
  const auth = { authorization: `Bearer ${setup.account.testKey}` };
  const common = { title, connections: setup.connections, duration: seconds };
  if (operation === 'create' || operation === 'create-form') {
    return measured(pids, () =>
      runLoadAcross(urls, {
        ...common,
        requests: [
          {
            method: 'POST',
            path: '/v1/pause',
            headers: { ...auth, 'content-type': 'application/json' },
            body: operation === 'create' ? CREATE_BODY : CREATE_FORM_BODY,
          },
        ],
      }),
    );
  }
  if (operation === 'get') {
    // Without a respond run first there are no ids yet: one pool's worth of pending pauses serves.
    if (setup.ids.length === 0) await answerPool(setup, 'respond', seconds);
    // The titles of the creates just before (the worker's) are not the read's work.
    await settle(setup);
    const { ids } = setup;
    return measured(pids, () =>
      runLoadAcross(urls, {
        ...common,
        requests: [
          {
            method: 'GET',
            headers: auth,
            setupRequest: (request) => ({
              ...request,
              path: `/v1/pause/${ids[Math.floor(Math.random() * ids.length)]}`,
            }),
          },
        ],
      }),
    );
  }
  const tokens = await answerPool(setup, operation, seconds);
  let next = 0;
  const figures = await measured(pids, () =>
    runLoadAcross(urls, {
      ...common,
      requests: [
        {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: operation === 'respond-form' ? RESPOND_FORM_BODY : '{"choice":"approve"}',
          // Each request answers the next fresh pause; past the pool's end they
          // would repeat (and get 409, failing the run), which the pool's size prevents.
          setupRequest: (request) => ({ ...request, path: `/v1/respond/${tokens[next++ % tokens.length]}` }),
        },
      ],
    }),
  );
  if (next > tokens.length) throw new Error(`${title}: used ${next} tokens of a pool of ${tokens.length}`);
  setup.rates[operation] = Math.max(setup.rates[operation], figures.rps);
  return figures;
}

/**
 * Pending pauses for one run of an answering operation, inserted straight
 * into the database: four times what its fastest run so far would answer in
 * `seconds` (a warm-up of 2 s can run at a third of a warm round's rate), and
 * at least 40,000. Returns the tokens the requests use, one per pause: the
 * pause's own for respond (whose ids get also reads), for vote and decide the
 * token of the reviewer whose vote the request casts.
 */
async function answerPool(setup: Setup, operation: Answering, seconds: number): Promise<string[]> {
  const count = Math.max(40_000, Math.ceil(setup.rates[operation] * seconds * 4));
  const pause = { ...rawPause(setup.account.developerId), count };
  if (operation === 'respond-form') {
    const { ids, seconds: took } = await insertPausesDirectly(setup.store, { ...pause, form: FORM, keepIds: true });
    console.log(
      `  ${operation} pool: ${int(count)} pending pauses with a form inserted in ${took.toFixed(1)} s${await settle(setup)}`,
    );
    return ids.map(responseTokenFor);
  }
  if (operation === 'respond') {
    const { ids, seconds: took } = await insertPausesDirectly(setup.store, { ...pause, keepIds: true });
    console.log(`  respond pool: ${int(count)} pending pauses inserted in ${took.toFixed(1)} s${await settle(setup)}`);
    // Not push(...ids): a pool can pass 125,000, more arguments than a call may take.
    for (const id of ids) setup.ids.push(id);
    return ids.map(responseTokenFor);
  }
  // Two reviewers, quorum 2: the first vote counts and leaves the pause pending; the second decides.
  const voted = operation === 'vote' ? 0 : 1;
  const { pauses, seconds: took } = await insertReviewedPausesDirectly(setup.store, {
    ...pause,
    reviewers: 2,
    quorum: 2,
    voted,
  });
  console.log(
    `  ${operation} pool: ${int(count)} pending pauses with 2 reviewers, quorum 2, ${voted} vote(s) cast, ` +
      `inserted in ${took.toFixed(1)} s${await settle(setup)}`,
  );
  return pauses.map(({ id, reviewerIds }) => reviewerTokenFor(id, reviewerIds[voted]!));
}

/**
 * On SQLite, waits for the service's worker to put the pool's titles into the
 * text index, then copies the pool's pages from the WAL into the database
 * file and empties the WAL before the run, so that neither the worker nor the
 * checkpointer thread spends the run on the pool (their CPU is the
 * service's): a pool's 40,000 titles take the worker seconds, and a vote
 * pool's 40,000 pauses and 80,000 reviewers fill tens of MiB of WAL. The
 * run's own writes are still indexed and checkpointed during it, as in
 * production.
 */
async function settle(setup: Setup): Promise<string> {
  if (setup.database.kind !== 'sqlite') return '';
  const indexing = await titlesIndexed(setup.store);
  const started = performance.now();
  for (let attempt = 0; attempt < 50; attempt++) {
    // busy = 1 while the service's checkpointer holds the checkpoint lock: try again.
    const { rows } = await sql<{ busy: number }>`pragma wal_checkpoint(TRUNCATE)`.execute(setup.store.db);
    if (rows[0]?.busy === 0) {
      const seconds = (performance.now() - started) / 1000;
      return `, titles indexed after ${indexing.toFixed(1)} s, WAL checkpointed in ${seconds.toFixed(1)} s`;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('the WAL could not be checkpointed before the run (busy for 5 s)');
}

const rawPause = (developerId: string) => ({
  developerId,
  mode: 'test' as const,
  expiresAt: new Date(Date.now() + FAR_FUTURE_MS).toISOString(),
  title: 'Deploy build 1234 to production?',
});

function report(
  results: Round[],
  operations: Operation[],
  instances: number,
  postgres: boolean,
  skipRaw: boolean,
): void {
  const rows: string[][] = [];
  results.forEach((round, i) => {
    const n = i + 1;
    rows.push([`hello-world GET / (round ${n})`, ...measuredCells(round.hello)]);
    rows.push([`bare POST /bare (round ${n})`, ...measuredCells(round.bare)]);
    if (round.floor) rows.push([`floor read GET /floor/:id (round ${n})`, ...measuredCells(round.floor)]);
    for (const operation of operations) {
      rows.push([`${operation}, 1 instance (round ${n})`, ...measuredCells(round.one[operation])]);
      if (round.two) rows.push([`${operation}, 2 instances (round ${n})`, ...measuredCells(round.two[operation])]);
    }
  });
  console.log('');
  console.log(table(['run', ...MEASURED_HEADER], rows));
  console.log('');
  const rawOperations = skipRaw ? [] : operations.filter(isRaw);
  const rawOf = (round: Round, operation: RawOperation) => round.raw[operation]!;
  if (!skipRaw)
    console.log(
      table(
        [
          'raw driver loop',
          ...rawOperations.map((op) => `${op} rows/s`),
          ...rawOperations.map((op) => `${op} CPU/row`),
        ],
        results.map((round, i) => [
          `round ${i + 1}`,
          ...rawOperations.map((op) => int(rawRate(rawOf(round, op)))),
          ...rawOperations.map((op) => `${int((rawOf(round, op).cpuSeconds / rawOf(round, op).rows) * 1e6)} µs`),
        ]),
      ),
    );
  console.log('');
  const med = (pick: (round: Round) => number) => median(results.map(pick));
  const cpuPerRequest = (m: Measured) => m.serverCpu / m.rps;
  const rawCpuPerRow = (raw: RawLoopResult) => raw.cpuSeconds / raw.rows;
  const withCreate = operations.includes('create');
  const summaryRow = (label: string, operation: Operation, pick: (round: Round) => Measured) => [
    label,
    int(med((r) => pick(r).rps)),
    `${med((r) => pick(r).p50).toFixed(2)} ms`,
    `${med((r) => pick(r).p99).toFixed(2)} ms`,
    pct(med((r) => pick(r).rps / r.hello.rps)),
    pct(med((r) => pick(r).rps / r.bare.rps)),
    isRaw(operation) && !skipRaw ? pct(med((r) => pick(r).rps / rawRate(rawOf(r, operation)))) : '—',
    withCreate ? pct(med((r) => pick(r).rps / r.one.create.rps)) : '—',
    `${int(med((r) => cpuPerRequest(pick(r))) * 1e6)} µs`,
    pct(med((r) => cpuPerRequest(r.hello) / cpuPerRequest(pick(r)))),
    pct(med((r) => cpuPerRequest(r.bare) / cpuPerRequest(pick(r)))),
    isRaw(operation) && !skipRaw ? pct(med((r) => rawCpuPerRow(rawOf(r, operation)) / cpuPerRequest(pick(r)))) : '—',
    withCreate ? pct(med((r) => cpuPerRequest(r.one.create) / cpuPerRequest(pick(r)))) : '—',
  ];
  const summary: string[][] = [];
  for (const operation of operations) {
    summary.push(summaryRow(`${operation}, 1 instance`, operation, (r) => r.one[operation]));
    if (instances === 2) summary.push(summaryRow(`${operation}, 2 instances`, operation, (r) => r.two![operation]));
  }
  console.log(`Medians of ${results.length} round(s), ${postgres ? 'PostgreSQL' : 'SQLite'}:`);
  console.log(
    table(
      [
        'operation',
        'req/s',
        'p50',
        'p99',
        '/ hello req/s',
        '/ bare POST req/s',
        '/ raw rows/s',
        '/ create req/s',
        'CPU/req',
        'hello CPU / this',
        'bare POST CPU / this',
        'raw CPU / this',
        'create CPU / this',
      ],
      summary,
    ),
  );
  console.log(
    'The last four columns compare CPU per request (server processes only): what the ratios would be if every ' +
      'process had a core to itself. They are less swayed by other load than req/s is. "/ create" is against ' +
      'create on one instance in the same round.',
  );
  console.log(
    `baselines: hello-world GET / ${int(med((r) => r.hello.rps))} req/s, ${int(med((r) => cpuPerRequest(r.hello)) * 1e6)} µs CPU/req; ` +
      `bare POST /bare ${int(med((r) => r.bare.rps))} req/s, ${int(med((r) => cpuPerRequest(r.bare)) * 1e6)} µs CPU/req`,
  );
  console.log('');
  const perRound = (ratio: (round: Round) => number) => results.map((r) => pct(ratio(r))).join(', ');
  for (const operation of operations) {
    const target = TARGET_BARE_POST_RATIO[operation];
    if (target === undefined) continue;
    const ratio = med((r) => r.one[operation].rps / r.bare.rps);
    const againstGet =
      operation === 'get'
        ? `; against the bare GET ${pct(med((r) => r.one.get.rps / r.hello.rps))} (per round ${perRound((r) => r.one.get.rps / r.hello.rps)})`
        : '';
    console.log(
      `RESULT ${operation}: ${pct(ratio)} of the bare POST's req/s (per round ${perRound((r) => r.one[operation].rps / r.bare.rps)}; ` +
        `target >= ${pct(target)})${againstGet}: ${verdict(ratio >= target)}`,
    );
  }
  if (results.every((r) => r.floor)) {
    const floorOf = (r: Round) => r.floor as Measured;
    console.log(
      `FLOOR read (one prepared select over HTTP, bench/hello-world.ts): ${pct(med((r) => floorOf(r).rps / r.bare.rps))} ` +
        `of the bare POST's req/s (per round ${perRound((r) => floorOf(r).rps / r.bare.rps)}), ` +
        `${int(med((r) => cpuPerRequest(floorOf(r))) * 1e6)} µs CPU/req; get is ${pct(med((r) => r.one.get.rps / floorOf(r).rps))} ` +
        `of the floor's req/s (per round ${perRound((r) => r.one.get.rps / floorOf(r).rps)}; ` +
        `CPU: floor / get ${pct(med((r) => cpuPerRequest(floorOf(r)) / cpuPerRequest(r.one.get)))})`,
    );
  }
  for (const operation of operations.filter((op) => op === 'create' || op === 'respond')) {
    const ratio = med((r) => r.one[operation].rps / r.hello.rps);
    console.log(
      `RESULT ${operation}: ${pct(ratio)} of hello-world req/s (per round ${results.map((r) => pct(r.one[operation].rps / r.hello.rps)).join(', ')}; ` +
        `target >= ${pct(TARGET_HELLO_RATIO)}): ${verdict(ratio >= TARGET_HELLO_RATIO)}`,
    );
  }
  if (withCreate) {
    for (const operation of operations.filter((op) => op === 'respond' || op === 'vote' || op === 'decide')) {
      const ratio = med((r) => r.one[operation].rps / r.one.create.rps);
      const target = operation === 'decide' ? 'no target' : `target >= ${pct(TARGET_CREATE_RATIO)}`;
      console.log(
        `RESULT ${operation}: ${pct(ratio)} of create req/s (per round ${results.map((r) => pct(r.one[operation].rps / r.one.create.rps)).join(', ')}; ` +
          `${target})${operation === 'decide' ? '' : `: ${verdict(ratio >= TARGET_CREATE_RATIO)}`}`,
      );
    }
  }
  if (withCreate) {
    for (const operation of operations) {
      const target = TARGET_FORM_RATIO[operation];
      if (target === undefined) continue;
      const ratio = med((r) => r.one[operation].rps / r.one.create.rps);
      console.log(
        `RESULT ${operation}: ${pct(ratio)} of create req/s (per round ${perRound((r) => r.one[operation].rps / r.one.create.rps)}; ` +
          `target >= ${pct(target)}; CPU ${pct(med((r) => cpuPerRequest(r.one.create) / cpuPerRequest(r.one[operation])))} of create's rate): ` +
          verdict(ratio >= target),
      );
    }
  }
  if (instances === 2) {
    for (const operation of operations) {
      const scaling = med((r) => r.two![operation].rps / r.one[operation].rps);
      console.log(
        `RESULT ${operation} scaling: two instances / one = ${scaling.toFixed(2)}× ` +
          `(per round ${results.map((r) => `${(r.two![operation].rps / r.one[operation].rps).toFixed(2)}×`).join(', ')}; ` +
          `target >= ${TARGET_SCALING}×): ${verdict(scaling >= TARGET_SCALING)}`,
      );
    }
  }
  console.log(
    'server CPU is the busy share of one core the service process(es) used; bench CPU is autocannon in this ' +
      'process; other CPU is everything else on the machine (of 200% on 2 cores).',
  );
}

const rawRate = (result: RawLoopResult) => result.rows / result.seconds;
