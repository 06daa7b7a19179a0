import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

// scripts/build-if-stale.mjs (run by npm start and npm run migrate) in a
// throw-away package whose "build" only counts its runs: it builds when there
// is no build yet or a source changed, and skips the build otherwise.

const SCRIPT = new URL('../../scripts/build-if-stale.mjs', import.meta.url).pathname;
const temps: string[] = [];
afterAll(() => {
  for (const dir of temps) rmSync(dir, { recursive: true, force: true });
});

const BUILD = [
  "const fs = require('fs');",
  "fs.mkdirSync('dist', { recursive: true }); fs.mkdirSync('sdk/dist', { recursive: true });",
  "fs.writeFileSync('dist/main.js', ''); fs.writeFileSync('sdk/dist/index.js', '');",
  "fs.appendFileSync('builds.log', 'x');",
].join(' ');

function fixture(): string {
  const root = mkdtempSync(join(tmpdir(), 'pausepoint-build-'));
  temps.push(root);
  mkdirSync(join(root, 'src/routes'), { recursive: true });
  mkdirSync(join(root, 'sdk/src'), { recursive: true });
  writeFileSync(join(root, 'package.json'), JSON.stringify({ scripts: { build: `node -e "${BUILD}"` } }));
  writeFileSync(join(root, 'src/main.ts'), '');
  writeFileSync(join(root, 'src/routes/a.ts'), '');
  writeFileSync(join(root, 'sdk/src/index.ts'), '');
  return root;
}

/** Runs the script in `root`; how many builds have run there so far. */
function start(root: string): number {
  const run = spawnSync(process.execPath, [SCRIPT], { cwd: root, encoding: 'utf8' });
  expect(run.status, run.stderr).toBe(0);
  try {
    return readFileSync(join(root, 'builds.log'), 'utf8').length;
  } catch {
    return 0;
  }
}

/** Marks a path as modified now, as saving it in an editor does. */
function touch(path: string) {
  const now = new Date();
  utimesSync(path, now, now);
}

describe('build-if-stale', () => {
  it('builds when there is no build, then skips while nothing changed', () => {
    const root = fixture();
    expect(start(root)).toBe(1);
    expect(start(root)).toBe(1);
    expect(start(root)).toBe(1);
  });

  it.each([
    ['a source file under src/', 'src/routes/a.ts'],
    ['a file of the SDK', 'sdk/src/index.ts'],
    ['package.json', 'package.json'],
  ])('rebuilds when %s changed', (_what, path) => {
    const root = fixture();
    expect(start(root)).toBe(1);
    touch(join(root, path));
    expect(start(root)).toBe(2);
    expect(start(root)).toBe(2);
  });

  it('rebuilds when a source file is removed (its folder changed)', () => {
    const root = fixture();
    expect(start(root)).toBe(1);
    rmSync(join(root, 'src/routes/a.ts'));
    expect(start(root)).toBe(2);
  });

  it('rebuilds when an output is missing', () => {
    const root = fixture();
    expect(start(root)).toBe(1);
    rmSync(join(root, 'dist/main.js'));
    expect(start(root)).toBe(2);
  });
});
