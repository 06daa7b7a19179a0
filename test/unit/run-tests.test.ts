import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

// scripts/run-tests.mjs (npm test) over a one-file fixture suite: its closing
// lines, its exit status, and the reports folder it leaves (none).

const ROOT = new URL('../../', import.meta.url).pathname;
const FIXTURE_CONFIG = 'test/unit/run-tests-fixture/vitest.config.ts';
const temps: string[] = [];
afterAll(() => {
  for (const dir of temps) rmSync(dir, { recursive: true, force: true });
});

interface RunnerResult {
  code: number | null;
  lines: string[];
  leftInTmp: string[];
}

async function runTests(scenario: string, postgres = false): Promise<RunnerResult> {
  // Its own TMPDIR, to see what it leaves behind without counting other runs'.
  const tmp = mkdtempSync(join(tmpdir(), 'pausepoint-runner-'));
  temps.push(tmp);
  const env: Record<string, string | undefined> = { ...process.env, TMPDIR: tmp, RUNNER_FIXTURE: scenario };
  delete env.TEST_DB;
  if (postgres) env.TEST_POSTGRES_URL = 'postgres://unused@127.0.0.1:1/unused';
  else delete env.TEST_POSTGRES_URL;
  const child = spawn(process.execPath, ['scripts/run-tests.mjs', '--config', FIXTURE_CONFIG], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr.resume();
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { code, lines: stdout.trimEnd().split('\n'), leftInTmp: readdirSync(tmp) };
}

describe('scripts/run-tests.mjs', { timeout: 120_000 }, () => {
  it('ends a passing run with the count alone, exits 0, and removes its reports', async () => {
    const run = await runTests('pass');
    expect(run.code).toBe(0);
    expect(run.lines.at(-1)).toBe('1 passed, 0 failed');
    expect(run.leftInTmp.filter((name) => name.startsWith('pausepoint-reports-'))).toEqual([]);
  });

  it('says why it failed on the last line, after the count, when every test passed', async () => {
    const run = await runTests('teardown-error');
    expect(run.code).toBe(1);
    expect(run.lines.at(-2)).toBe('1 passed, 0 failed');
    expect(run.lines.at(-1)).toBe(
      'failed: sqlite vitest exited 1 with no failed test (an error outside the tests; see above)',
    );
    expect(run.leftInTmp.filter((name) => name.startsWith('pausepoint-reports-'))).toEqual([]);
  });

  it('names the failed tests of each engine', async () => {
    const run = await runTests('failing-test', true);
    expect(run.code).toBe(1);
    expect(run.lines.at(-2)).toBe('2 passed, 2 failed');
    expect(run.lines.at(-1)).toBe('failed: sqlite: 1 test failed; postgres: 1 test failed');
    // Each failed test by engine, file and name, with the first line of why, just before the count.
    const named = run.lines.slice(-5, -3);
    expect(named).toEqual([
      expect.stringMatching(/^FAILED sqlite test\/unit\/run-tests-fixture\/\S+ > .+: AssertionError: /),
      expect.stringMatching(/^FAILED postgres test\/unit\/run-tests-fixture\/\S+ > .+: AssertionError: /),
    ]);
  });
});
