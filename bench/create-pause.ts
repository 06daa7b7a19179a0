// Create-pause throughput: POST /v1/pause with a test key on SQLite serves at
// least 40% of the requests/s of a bare Fastify route that takes the same
// JSON body over POST, both measured in this run on this machine (CONTRIBUTING.md,
// Benchmarks). A bare Fastify hello-world GET is measured beside them.
//
//   npx tsx bench/create-pause.ts [--rounds=2] [--duration=10] [--warmup=2]
//                                 [--connections=10] [--postgres] [--cpu-prof[=<dir>]]
//
// The service (node dist/main.js serve, after npm run build) and the baseline
// (bench/hello-world.ts) each run as their own process; autocannon runs here.
// Rounds alternate baseline, service, baseline, service… so drift in the
// machine's load hits both; the ratio is taken per round and its median kept.
// The baseline's POST /pause takes the same body through the same request and
// response schemas on bare Fastify with nothing behind it: the target's
// baseline, and what a create costs Fastify itself.
// --cpu-prof runs the service under the V8 profiler (slower: its figures are
// not the result) and prints where the service spent its time.
import { startHelloWorld } from './lib/baselines.js';
import { profileArgs, profileDirectory, summariseProfiles } from './lib/cpu-profile.js';
import { checkFlags, numberFlag, parseFlags, runBenchmark } from './lib/harness.js';
import { runLoad } from './lib/load.js';
import { MEASURED_HEADER, type Measured, measured, measuredCells } from './lib/measure.js';
import { int, machineSummary, ms, pct, table, verdict } from './lib/report.js';
import { buildService, builtFrom, freshDatabase, register, startService } from './lib/service.js';
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
  if (rounds > 10 || duration > 60) throw new Error('--rounds is at most 10 and --duration at most 60');

  console.log('# bench:create — create-pause throughput against bare Fastify taking the same body');
  console.log(await machineSummary());
  buildService();
  console.log(`service built from ${builtFrom()}`);

  const database = await freshDatabase(postgres);
  // --cpu-prof profiles into a temp folder removed at the end; --cpu-prof=<dir> keeps the .cpuprofile there.
  const profileDir = profileDirectory(flags.get('cpu-prof'));
  const service = await startService({ database, nodeArgs: profileArgs(profileDir) });
  const hello = await startHelloWorld();
  const account = await register(service.url);
  console.log(
    `service pid ${service.pid} on ${service.url} over ${database.description}; hello-world pid ${hello.pid}`,
  );

  const createBody = JSON.stringify({
    title: 'Deploy build 1234 to production?',
    body: 'Tests passed; 3 files changed.',
    expires_in: 3600,
    metadata: { build: 1234 },
  });
  /** POST `createBody` to `url` for `seconds`, measuring the server `pid`. */
  const postPause = (pid: number, url: string, headers: Record<string, string>) => (title: string, seconds: number) =>
    measured([pid], () =>
      runLoad({
        title,
        url,
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: createBody,
        connections,
        duration: seconds,
      }),
    );
  const createRun = postPause(service.pid, `${service.url}/v1/pause`, { authorization: `Bearer ${account.testKey}` });
  const floorRun = postPause(hello.pid, `${hello.url}/pause`, {});
  const helloRun = (title: string, seconds: number) =>
    measured([hello.pid], () => runLoad({ title, url: `${hello.url}/`, connections, duration: seconds }));

  console.log(`warm-up: ${warmup} s each, ${connections} connections`);
  await helloRun('warm-up hello', warmup);
  await floorRun('warm-up floor', warmup);
  await createRun('warm-up create', warmup);

  const results: Array<{ round: number; hello: Measured; floor: Measured; create: Measured }> = [];
  for (let round = 1; round <= rounds; round++) {
    console.log(`round ${round}/${rounds}: ${duration} s each, ${connections} connections`);
    const helloFigures = await helloRun(`hello-world round ${round}`, duration);
    const floorFigures = await floorRun(`framework floor round ${round}`, duration);
    const createFigures = await createRun(`create-pause round ${round}`, duration);
    results.push({ round, hello: helloFigures, floor: floorFigures, create: createFigures });
  }

  const rows = results.flatMap(({ round, hello: h, floor: f, create: c }) => [
    [`hello-world GET / (round ${round})`, ...measuredCells(h)],
    [`bare Fastify POST /pause (round ${round})`, ...measuredCells(f)],
    [`POST /v1/pause (round ${round})`, ...measuredCells(c)],
  ]);
  const ratios = results.map(({ floor: f, create: c }) => c.rps / f.rps);
  const ratio = median(ratios);
  const summary = (pick: (r: (typeof results)[number]) => Measured) =>
    `${int(median(results.map((r) => pick(r).rps)))} req/s, p50 ${ms(median(results.map((r) => pick(r).p50)))}, ` +
    `p99 ${ms(median(results.map((r) => pick(r).p99)))}`;

  console.log('');
  console.log(table(['run', ...MEASURED_HEADER], rows));
  console.log('');
  console.log(`hello-world GET / (median of ${rounds} rounds): ${summary((r) => r.hello)}`);
  console.log(`create-pause POST /v1/pause (median of ${rounds} rounds): ${summary((r) => r.create)}`);
  console.log(`bare Fastify POST /pause (median of ${rounds} rounds): ${summary((r) => r.floor)}`);
  console.log(`ratio create / bare Fastify POST per round: ${ratios.map(pct).join(', ')}`);
  const cpuPerRequest = (m: Measured) => m.serverCpu / m.rps;
  const medianCpu = (pick: (r: (typeof results)[number]) => Measured) =>
    median(results.map((r) => cpuPerRequest(pick(r))));
  const costRatio = median(results.map(({ hello: h, create: c }) => cpuPerRequest(h) / cpuPerRequest(c)));
  console.log(
    `server CPU per request: hello-world ${int(medianCpu((r) => r.hello) * 1e6)} µs, ` +
      `bare Fastify POST /pause ${int(medianCpu((r) => r.floor) * 1e6)} µs, ` +
      `create-pause ${int(medianCpu((r) => r.create) * 1e6)} µs; ` +
      `hello / create = ${pct(costRatio)} (what the ratio would be with both servers CPU-bound; less swayed by other load)`,
  );
  console.log(
    `hello-world: bare Fastify POST /pause = ${pct(median(results.map((r) => r.floor.rps / r.hello.rps)))} of ` +
      `hello-world req/s; create-pause = ${pct(median(results.map((r) => r.create.rps / r.hello.rps)))} of it`,
  );
  console.log(
    `RESULT: create-pause = ${pct(ratio)} of bare Fastify POST /pause req/s (target >= ${pct(TARGET_RATIO)}): ` +
      verdict(ratio >= TARGET_RATIO),
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
