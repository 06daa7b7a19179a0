#!/usr/bin/env node
// The project's test command: the whole suite on SQLite, then again on
// PostgreSQL when TEST_POSTGRES_URL is set, and one closing line that counts both.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const extraArgs = process.argv.slice(2);
const engines = ['sqlite'];
if (process.env.TEST_POSTGRES_URL) engines.push('postgres');
else console.log('TEST_POSTGRES_URL is not set: running the suite on SQLite only.');

const reports = mkdtempSync(join(tmpdir(), 'pausepoint-reports-'));
let passed = 0;
let failed = 0;
let ok = true;
for (const engine of engines) {
  console.log(`\n=== pausepoint tests on ${engine === 'sqlite' ? 'SQLite' : 'PostgreSQL'} ===\n`);
  const report = join(reports, `${engine}.json`);
  // Tests of PostgreSQL-only behaviour live in postgres-only/ folders.
  const exclude = engine === 'sqlite' ? ['--exclude', '**/postgres-only/**'] : [];
  const run = spawnSync(
    'npx',
    ['vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`, ...exclude, ...extraArgs],
    { stdio: 'inherit', env: { ...process.env, TEST_DB: engine } },
  );
  if (run.status !== 0) ok = false;
  try {
    const results = JSON.parse(readFileSync(report, 'utf8'));
    passed += results.numPassedTests;
    failed += results.numFailedTests;
    if (results.numTotalTests === 0) ok = false;
    // A skipped test is a promise not kept: the suite has none.
    if (results.numPendingTests > 0 || results.numTodoTests > 0) {
      console.log(`${engine}: ${results.numPendingTests + results.numTodoTests} tests were skipped; none may be`);
      ok = false;
    }
    console.log(`${engine}: ${results.numPassedTests} passed, ${results.numFailedTests} failed`);
  } catch {
    ok = false;
    console.log(`${engine}: no test report (the run did not finish)`);
  }
}
console.log(`\n${passed} passed, ${failed} failed`);
process.exit(ok && failed === 0 ? 0 : 1);
