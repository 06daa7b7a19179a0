#!/usr/bin/env node
// The project's test command: the whole suite on SQLite and, when
// TEST_POSTGRES_URL is set, again on PostgreSQL beside it, and a closing line
// that counts both, `N passed, N failed`. CI reads that line. When the run fails, one more
// line after it says why: `failed: <reason>; <reason>`, and before the count a line
// for each failed test: `FAILED <engine> <file> > <test>: <first line of why>`.
// The files of ENGINE_INDEPENDENT run once: in the SQLite run, except those of
// BALANCED_TO_POSTGRES, which go to the PostgreSQL run when there is one.
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Test files whose assertions cannot depend on the database engine. Either
 * they never open the service's database, or what they check is the client
 * side of it: the SDK and the CLI (clients of the API), the documentation and
 * examples, what a browser does with the pages (`*-browser`); the server
 * behaviour those drive is tested on both engines by the files beside them.
 * They run once, in the SQLite run. CONTRIBUTING.md states the rule.
 */
const ENGINE_INDEPENDENT = [
  'test/unit/**',
  'test/cli/**',
  'test/sdk/**',
  'test/examples/**',
  'test/e2e/**/*-browser.test.ts',
  'test/e2e/**/browser.test.ts',
  'test/property/ssrf.test.ts',
  'test/e2e/http/api-reference.test.ts',
  'test/e2e/http/routing.test.ts',
  'test/e2e/security/slow-clients.test.ts',
  // The bodies it sends are refused by the parser before any database work;
  // run twice at once, its two timing rounds loaded the machine for each other.
  'test/e2e/security/request-cost.test.ts',
  'test/e2e/security/strict-transport-security.test.ts',
  'test/e2e/webhooks/safe-client.test.ts',
  'test/e2e/operations/secret-file.test.ts',
];

/**
 * Engine-independent files that run in the PostgreSQL run when there is one,
 * not in SQLite's: the SQLite run holds every other engine-independent file
 * and was the longer of the two side-by-side runs by about a third (519 s
 * against 389 s on a 2-core machine); with these moved, they end together.
 * They are clients of the API: the examples and the documentation's snippets.
 */
const BALANCED_TO_POSTGRES = ['test/examples/**'];

/**
 * Files that time how quickly the service answers under a load they make
 * themselves (/health's p99 while clients send costly bodies): beside two
 * suites their figures measured the other suite's load, and failed CI. With
 * no arguments (the whole suite), they run after both engines' runs, alone,
 * on SQLite; a run given arguments runs them where they fall.
 */
const ALONE = ['test/e2e/security/request-cost.test.ts'];

const extraArgs = process.argv.slice(2);
const aloneApart = extraArgs.length === 0;
const engines = ['sqlite'];
if (process.env.TEST_POSTGRES_URL) engines.push('postgres');
else console.log('TEST_POSTGRES_URL is not set: running the suite on SQLite only.');

const reports = mkdtempSync(join(tmpdir(), 'pausepoint-reports-'));
let passed = 0;
let failed = 0;
const reasons = [];
const failedTests = [];
try {
  // The engines' runs go side by side: the tests mostly wait (on HTTP, the
  // database, a browser), and one run alone keeps about one core of two busy.
  // Alone, a run's output streams; side by side, each run's output is printed
  // whole when it ends, SQLite's first.
  const sideBySide = engines.length > 1;
  if (sideBySide) console.log('\nRunning the SQLite and PostgreSQL suites side by side; each one prints when it ends.');
  const runs = engines.map((engine) => runEngine(engine, sideBySide));
  for (const [index, engine] of engines.entries()) {
    count(engine, engine === 'sqlite' ? 'SQLite' : 'PostgreSQL', await runs[index]);
  }
  if (aloneApart) {
    console.log('\nRunning the timing tests alone.');
    count('alone', 'SQLite, alone', await runEngine('sqlite', false, 'alone'));
  }
} finally {
  rmSync(reports, { recursive: true, force: true });
}
// The failed tests again, at the end, before the count: a CI log is often read from its tail only.
if (failedTests.length > 0) console.log('');
for (const line of failedTests) console.log(line);
console.log(`\n${passed} passed, ${failed} failed`);
if (passed + failed === 0) reasons.push('no tests ran');
if (reasons.length > 0) console.log(`failed: ${reasons.join('; ')}`);
process.exit(reasons.length === 0 ? 0 : 1);

/** Prints a finished run's output and counts its report; `name` names it in the closing lines. */
function count(name, title, run) {
  console.log(`\n=== pausepoint tests on ${title} ===\n`);
  if (run.output !== undefined) process.stdout.write(readFileSync(run.output));
  const results = readReport(join(reports, `${name}.json`));
  if (!results) {
    console.log(`${name}: no test report (the run did not finish)`);
    reasons.push(`${name}: no test report (${howItEnded(run)}; see above)`);
    return;
  }
  passed += results.numPassedTests;
  failed += results.numFailedTests;
  console.log(`${name}: ${results.numPassedTests} passed, ${results.numFailedTests} failed`);
  reasons.push(...failuresOf(name, run, results));
  failedTests.push(...failedTestsOf(name, results));
}

/**
 * One vitest run on `engine`, with its JSON report in the reports folder
 * (`name`.json); its output streams, or with `captured` goes to a file of
 * that folder. The run named `alone` runs the ALONE files only.
 */
function runEngine(engine, captured, name = engine) {
  // The other engine's own folder is left out by vitest.config.ts, from TEST_DB.
  const withPostgres = engines.includes('postgres');
  const excluded =
    engine === 'sqlite'
      ? [...(withPostgres ? BALANCED_TO_POSTGRES : [])]
      : ENGINE_INDEPENDENT.filter((glob) => !BALANCED_TO_POSTGRES.includes(glob));
  if (aloneApart && name !== 'alone') excluded.push(...ALONE);
  const exclude = excluded.flatMap((glob) => ['--exclude', glob]);
  const args = [
    'vitest',
    'run',
    '--reporter=default',
    '--reporter=json',
    `--outputFile.json=${join(reports, `${name}.json`)}`,
    ...exclude,
    // A selection of files may leave one run nothing to do; the count of both tells.
    ...(engines.length > 1 ? ['--passWithNoTests'] : []),
    ...(name === 'alone' ? ALONE : extraArgs),
  ];
  const output = captured ? join(reports, `${name}.log`) : undefined;
  const fd = output === undefined ? undefined : openSync(output, 'w');
  const child = spawn('npx', args, {
    stdio: fd === undefined ? 'inherit' : ['ignore', fd, fd],
    env: { ...process.env, TEST_DB: engine, ...(captured ? { FORCE_COLOR: process.stdout.isTTY ? '1' : '0' } : {}) },
  });
  return new Promise((resolve) => {
    const done = (ended) => {
      if (fd !== undefined) closeSync(fd);
      resolve({ ...ended, output });
    };
    child.on('error', (error) => done({ error }));
    child.on('close', (status, signal) => done({ status, signal }));
  });
}

function readReport(file) {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
}

/** Why one engine's run failed, if it did: each reason a short phrase. */
function failuresOf(engine, run, results) {
  const reasons = [];
  const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;
  if (results.numFailedTests > 0) reasons.push(`${engine}: ${plural(results.numFailedTests, 'test')} failed`);
  // A skipped test is a promise not kept: the suite has none.
  const skipped = results.numPendingTests + results.numTodoTests;
  if (skipped > 0) reasons.push(`${engine}: ${plural(skipped, 'test')} skipped; none may be`);
  if (run.status !== 0 && reasons.length === 0) {
    reasons.push(`${engine} vitest ${howItEnded(run)} with no failed test (an error outside the tests; see above)`);
  }
  return reasons;
}

/** One line for each failed test of a report: engine, file, name and the first line of why. */
function failedTestsOf(engine, results) {
  const lines = [];
  for (const file of results.testResults ?? []) {
    const path = file.name.slice(process.cwd().length + 1);
    for (const test of file.assertionResults ?? []) {
      if (test.status !== 'failed') continue;
      const why = (test.failureMessages?.[0] ?? '').split('\n')[0].slice(0, 300);
      lines.push(`FAILED ${engine} ${path} > ${test.fullName}: ${why}`);
    }
    // A file that failed before its tests ran (an import error, a hook) has no failed test.
    if (file.status === 'failed' && !(file.assertionResults ?? []).some((test) => test.status === 'failed')) {
      lines.push(`FAILED ${engine} ${path}: ${(file.message ?? '').split('\n')[0].slice(0, 300)}`);
    }
  }
  return lines;
}

function howItEnded(run) {
  if (run.error) return `could not start (${run.error.message})`;
  if (run.signal) return `was killed by ${run.signal}`;
  return `exited ${run.status}`;
}
