// Issue 3, target A: POST /v1/pause with a test key on SQLite serves at least
// 40% of the requests/s of a bare Fastify hello-world route, both measured in
// this run on this machine.
//
//   npx tsx bench/create-pause.ts [--rounds=2] [--duration=10] [--warmup=2]
//                                 [--connections=10] [--postgres] [--cpu-prof[=<dir>]]
//
// The service (node dist/main.js serve, after npm run build) and the baseline
// (bench/hello-world.ts) each run as their own process; autocannon runs here.
// Rounds alternate baseline, service, baseline, service… so drift in the
// machine's load hits both; the ratio is taken per round and its median kept.
// --cpu-prof runs the service under the V8 profiler (slower: its figures are
// not the result) and prints where the service spent its time.
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { summariseProfiles } from './lib/cpu-profile.js';
import { checkFlags, freePort, numberFlag, parseFlags, runBenchmark, startChild, tempDir } from './lib/harness.js';
import { type LoadFigures, runLoad } from './lib/load.js';
import { readCpuSeconds, readMachineCpu } from './lib/proc.js';
import { int, machineSummary, ms, pct, table, verdict } from './lib/report.js';
import { buildService, builtFrom, freshDatabase, ROOT, register, startService } from './lib/service.js';
import { median } from './lib/stats.js';

const TARGET_RATIO = 0.4;

runBenchmark('bench:create', main, { maxMinutes: 15 });

async function main(): Promise<void> {
  const flags = parseFlags();
  checkFlags(flags, ['rounds', 'duration', 'warmup', 'connections', 'postgres', 'cpu-prof']);
  const rounds = numberFlag(flags, 'rounds', 2);
  const duration = numberFlag(flags, 'duration', 10);
  const warmup = numberFlag(flags, 'warmup', 2);
  const connections = numberFlag(flags, 'connections', 10);
  const postgres = flags.has('postgres');
  const profile = flags.has('cpu-prof');
  if (rounds > 10 || duration > 60) throw new Error('--rounds is at most 10 and --duration at most 60');

  console.log('# bench:create — create-pause throughput against a bare Fastify hello-world');
  console.log(await machineSummary());
  buildService();
  console.log(`service built from ${builtFrom()}`);

  const database = await freshDatabase(postgres);
  // --cpu-prof profiles into a temp folder removed at the end; --cpu-prof=<dir> keeps the .cpuprofile there.
  const keepProfile = flags.get('cpu-prof');
  let profileDir: string | undefined;
  if (keepProfile && keepProfile !== 'true') {
    profileDir = resolve(keepProfile);
    mkdirSync(profileDir, { recursive: true });
  } else if (profile) {
    profileDir = tempDir('pausepoint-cpuprof');
  }
  const service = await startService({
    database,
    nodeArgs: profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [],
  });
  const helloPort = await freePort();
  const hello = await startChild({
    name: 'hello-world',
    command: process.execPath,
    args: ['--import', 'tsx', join(ROOT, 'bench/hello-world.ts')],
    env: { PORT: String(helloPort) },
    url: `http://127.0.0.1:${helloPort}`,
    readyPath: '/',
  });
  const account = await register(service.url);
  console.log(
    `service pid ${service.pid} on ${service.url} over ${database.description}; hello-world pid ${hello.pid}`,
  );

  const createRun = (title: string, seconds: number) =>
    measured(service.pid, () =>
      runLoad({
        title,
        url: `${service.url}/v1/pause`,
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${account.testKey}` },
        body: JSON.stringify({
          title: 'Deploy build 1234 to production?',
          body: 'Tests passed; 3 files changed.',
          expires_in: 3600,
          metadata: { build: 1234 },
        }),
        connections,
        duration: seconds,
      }),
    );
  const helloRun = (title: string, seconds: number) =>
    measured(hello.pid, () => runLoad({ title, url: `${hello.url}/`, connections, duration: seconds }));

  console.log(`warm-up: ${warmup} s each, ${connections} connections`);
  await helloRun('warm-up hello', warmup);
  await createRun('warm-up create', warmup);

  const results: Array<{ round: number; hello: Measured; create: Measured }> = [];
  for (let round = 1; round <= rounds; round++) {
    console.log(`round ${round}/${rounds}: ${duration} s each, ${connections} connections`);
    const helloFigures = await helloRun(`hello-world round ${round}`, duration);
    const createFigures = await createRun(`create-pause round ${round}`, duration);
    results.push({ round, hello: helloFigures, create: createFigures });
  }

  const rows = results.flatMap(({ round, hello: h, create: c }) => [
    row(`hello-world GET / (round ${round})`, h),
    row(`POST /v1/pause (round ${round})`, c),
  ]);
  const ratios = results.map(({ hello: h, create: c }) => c.rps / h.rps);
  const ratio = median(ratios);
  const summary = (pick: (r: (typeof results)[number]) => Measured) =>
    `${int(median(results.map((r) => pick(r).rps)))} req/s, p50 ${ms(median(results.map((r) => pick(r).p50)))}, ` +
    `p99 ${ms(median(results.map((r) => pick(r).p99)))}`;

  console.log('');
  console.log(
    table(
      ['run', 'req/s', 'p50', 'p99', 'max', 'answered 2xx', 'server CPU', 'CPU/req', 'bench CPU', 'other CPU'],
      rows,
    ),
  );
  console.log('');
  console.log(`hello-world GET / (median of ${rounds} rounds): ${summary((r) => r.hello)}`);
  console.log(`create-pause POST /v1/pause (median of ${rounds} rounds): ${summary((r) => r.create)}`);
  console.log(`ratio create / hello per round: ${ratios.map(pct).join(', ')}`);
  const cpuPerRequest = (m: Measured) => m.serverCpu / m.rps;
  const costRatio = median(results.map(({ hello: h, create: c }) => cpuPerRequest(h) / cpuPerRequest(c)));
  console.log(
    `server CPU per request: hello-world ${int(median(results.map((r) => cpuPerRequest(r.hello))) * 1e6)} µs, ` +
      `create-pause ${int(median(results.map((r) => cpuPerRequest(r.create))) * 1e6)} µs; ` +
      `hello / create = ${pct(costRatio)} (what the ratio would be with both servers CPU-bound; less swayed by other load)`,
  );
  console.log(
    `RESULT A: create-pause = ${pct(ratio)} of hello-world req/s (target >= ${pct(TARGET_RATIO)}): ${verdict(ratio >= TARGET_RATIO)}`,
  );
  console.log(
    'server CPU is the busy share of one core the server process used during the run; near 100% means the server ' +
      'was the bottleneck, well below means the load generator (bench CPU) or other work on the machine ' +
      '(other CPU, of 200% on 2 cores) held it back.',
  );
  if (profileDir) {
    console.log('\nNOTE: the service ran under --cpu-prof, which slows it; use a run without it for the figures.');
    await service.stop();
    console.log(`\nCPU profile of the service (${profileDir}):`);
    console.log(summariseProfiles(profileDir));
  }
}

interface Measured extends LoadFigures {
  /** CPU seconds the server process used per wall second of the run (1 = one core busy). */
  serverCpu: number;
  /** The same for this (load-generating) process. */
  benchCpu: number;
  /** The same for everything else on the machine: noise. */
  otherCpu: number;
}

async function measured(pid: number, run: () => Promise<LoadFigures>): Promise<Measured> {
  const serverBefore = readCpuSeconds(pid);
  const benchBefore = process.cpuUsage();
  const machineBefore = readMachineCpu();
  const started = performance.now();
  const figures = await run();
  const wall = (performance.now() - started) / 1000;
  const bench = process.cpuUsage(benchBefore);
  const serverCpu = (readCpuSeconds(pid) - serverBefore) / wall;
  const benchCpu = (bench.user + bench.system) / 1e6 / wall;
  const machineCpu = (readMachineCpu().busy - machineBefore.busy) / wall;
  return { ...figures, serverCpu, benchCpu, otherCpu: Math.max(0, machineCpu - serverCpu - benchCpu) };
}

function row(name: string, figures: Measured): Array<string | number> {
  return [
    name,
    int(figures.rps),
    ms(figures.p50),
    ms(figures.p99),
    ms(figures.max),
    int(figures.ok),
    pct(figures.serverCpu),
    `${int((figures.serverCpu / figures.rps) * 1e6)} µs`,
    pct(figures.benchCpu),
    pct(figures.otherCpu),
  ];
}
