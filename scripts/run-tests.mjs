#!/usr/bin/env node
// The project's test command: the whole suite on SQLite, then again on
// PostgreSQL when TEST_POSTGRES_URL is set, and a closing line that counts
// both, `N passed, N failed`. CI reads that line. When the run fails, one more
// line after it says why: `failed: <reason>; <reason>`.
// The PostgreSQL run leaves out the files of ENGINE_INDEPENDENT: they ran once,
// in the SQLite run, and would only repeat it.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Test files whose assertions cannot depend on the database engine: they never
 * open the service's database, or what they check (documentation, the SDK's
 * types, the CLI's usage, the address policy, HTTP parsing) happens before or
 * without it. They run once, in the SQLite run. CONTRIBUTING.md states the rule.
 */
export const ENGINE_INDEPENDENT = [
  'test/unit/**',
  'test/cli/usage.test.ts',
  'test/sdk/types.test.ts',
  'test/sdk/signature.test.ts',
  'test/sdk/portability.test.ts',
  'test/property/ssrf.test.ts',
  'test/e2e/http/api-reference.test.ts',
  'test/e2e/http/routing.test.ts',
  'test/e2e/security/slow-clients.test.ts',
  'test/e2e/security/strict-transport-security.test.ts',
  'test/e2e/webhooks/safe-client.test.ts',
  'test/e2e/operations/secret-file.test.ts',
];

const extraArgs = process.argv.slice(2);
const engines = ['sqlite'];
if (process.env.TEST_POSTGRES_URL) engines.push('postgres');
else console.log('TEST_POSTGRES_URL is not set: running the suite on SQLite only.');

const reports = mkdtempSync(join(tmpdir(), 'pausepoint-reports-'));
let passed = 0;
let failed = 0;
const reasons = [];
try {
  for (const engine of engines) {
    console.log(`\n=== pausepoint tests on ${engine === 'sqlite' ? 'SQLite' : 'PostgreSQL'} ===\n`);
    const report = join(reports, `${engine}.json`);
    // Tests of one engine's own behaviour live in postgres-only/ and sqlite-only/ folders.
    const exclude =
      engine === 'sqlite'
        ? ['--exclude', '**/postgres-only/**']
        : ['--exclude', '**/sqlite-only/**', ...ENGINE_INDEPENDENT.flatMap((glob) => ['--exclude', glob])];
    const run = spawnSync(
      'npx',
      [
        'vitest',
        'run',
        '--reporter=default',
        '--reporter=json',
        `--outputFile.json=${report}`,
        ...exclude,
        // A selection of engine-independent files alone leaves nothing for PostgreSQL.
        ...(engine === 'sqlite' ? [] : ['--passWithNoTests']),
        ...extraArgs,
      ],
      { stdio: 'inherit', env: { ...process.env, TEST_DB: engine } },
    );
    const results = readReport(report);
    if (!results) {
      console.log(`${engine}: no test report (the run did not finish)`);
      reasons.push(`${engine}: no test report (${howItEnded(run)}; see above)`);
      continue;
    }
    passed += results.numPassedTests;
    failed += results.numFailedTests;
    console.log(`${engine}: ${results.numPassedTests} passed, ${results.numFailedTests} failed`);
    reasons.push(...failuresOf(engine, run, results));
  }
} finally {
  rmSync(reports, { recursive: true, force: true });
}
console.log(`\n${passed} passed, ${failed} failed`);
if (reasons.length > 0) console.log(`failed: ${reasons.join('; ')}`);
process.exit(reasons.length === 0 ? 0 : 1);

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
  if (results.numTotalTests === 0 && engine === 'sqlite') reasons.push(`${engine}: no tests ran`);
  // A skipped test is a promise not kept: the suite has none.
  const skipped = results.numPendingTests + results.numTodoTests;
  if (skipped > 0) reasons.push(`${engine}: ${plural(skipped, 'test')} skipped; none may be`);
  if (run.status !== 0 && reasons.length === 0) {
    reasons.push(`${engine} vitest ${howItEnded(run)} with no failed test (an error outside the tests; see above)`);
  }
  return reasons;
}

function howItEnded(run) {
  if (run.error) return `could not start (${run.error.message})`;
  if (run.signal) return `was killed by ${run.signal}`;
  return `exited ${run.status}`;
}
