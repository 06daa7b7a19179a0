#!/usr/bin/env node
// `npm start` and `npm run migrate` build first, but only when something the
// build reads changed since the last build this script ran: a build takes
// 20–30 s, a start with an up-to-date dist/ should not. The last build is
// marked by dist/.built, whose time is when that build began (so a source
// saved during the build counts as changed). Anything newer under the inputs
// below, including a folder whose entries were added, removed or renamed,
// means a rebuild; so does a missing dist/main.js or sdk/dist/index.js.
// Run from the package's root (npm does).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const INPUTS = [
  'src',
  'sdk/src',
  'package.json',
  'sdk/package.json',
  'tsconfig.json',
  'tsconfig.build.json',
  'sdk/tsconfig.json',
];
const OUTPUTS = ['dist/main.js', 'sdk/dist/index.js'];
const STAMP = 'dist/.built';

/** The newest modification time (ms) of a file, or of a folder and everything under it. */
function newestUnder(path) {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (!stat) return 0;
  let newest = stat.mtimeMs;
  if (stat.isDirectory()) {
    for (const entry of readdirSync(path)) newest = Math.max(newest, newestUnder(join(path, entry)));
  }
  return newest;
}

/** Why `root` needs a build, or null when its dist/ is current. */
export function staleBecause(root) {
  const missing = OUTPUTS.find((output) => !existsSync(join(root, output)));
  if (missing) return `${missing} is missing`;
  const stamp = statSync(join(root, STAMP), { throwIfNoEntry: false });
  if (!stamp) return 'no record of a build';
  const changed = INPUTS.find((input) => newestUnder(join(root, input)) > stamp.mtimeMs);
  return changed ? `${changed} changed since the last build` : null;
}

function buildIfStale(root) {
  const why = staleBecause(root);
  if (why === null) return 0;
  console.error(`Building: ${why}.`);
  const began = new Date();
  const build = spawnSync('npm', ['run', 'build', '--silent'], { cwd: root, stdio: 'inherit' });
  if (build.status !== 0) return build.status ?? 1;
  mkdirSync(join(root, 'dist'), { recursive: true });
  writeFileSync(join(root, STAMP), `${began.toISOString()}\n`);
  utimesSync(join(root, STAMP), began, began);
  return 0;
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  process.exitCode = buildIfStale(process.cwd());
}
