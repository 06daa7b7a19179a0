#!/usr/bin/env node
// `npm run bench`: builds the service once, then runs each benchmark of
// bench/ in turn (never two at once: they would skew each other), passing on
// any flags (e.g. `npm run bench -- --postgres`), and ends with one line per
// benchmark. BENCH_REF=<commit> benchmarks that commit instead of the
// working tree. Figures go to bench/RESULTS.md by hand.
import { spawnSync } from 'node:child_process';

const benchmarks = [
  ['create', 'bench/create-pause.ts'],
  ['memory', 'bench/pending-memory.ts'],
  ['expiry', 'bench/mass-expiry.ts'],
  ['api', 'bench/api-throughput.ts'],
  ['lag', 'bench/timeout-lag.ts'],
  ['webhooks', 'bench/webhook-delivery.ts'],
  ['console', 'bench/console-pages.ts'],
  ['search-abuse', 'bench/search-abuse.ts'],
];
const extraArgs = process.argv.slice(2);

// With BENCH_REF set, each benchmark builds its own snapshot of that commit.
if (!process.env.BENCH_REF) {
  const build = spawnSync('npm', ['run', 'build', '--silent'], { stdio: 'inherit' });
  if (build.status !== 0) {
    console.error('npm run build failed; no benchmark was run.');
    process.exit(1);
  }
}

const outcomes = [];
for (const [name, script] of benchmarks) {
  console.log(`\n=== bench:${name} (${script}) ===\n`);
  const started = Date.now();
  const run = spawnSync('npx', ['tsx', script, ...extraArgs], {
    stdio: 'inherit',
    env: process.env.BENCH_REF ? process.env : { ...process.env, BENCH_SKIP_BUILD: '1' },
    timeout: 25 * 60_000,
    killSignal: 'SIGINT',
  });
  const seconds = ((Date.now() - started) / 1000).toFixed(0);
  outcomes.push(
    `bench:${name}: ${run.status === 0 ? 'ran' : `did not finish (exit ${run.status ?? run.signal})`} in ${seconds} s`,
  );
}
console.log(`\n${outcomes.join('\n')}`);
console.log('Each RESULT line above says PASS or FAIL against its target.');
process.exit(outcomes.every((line) => line.includes(': ran ')) ? 0 : 1);
