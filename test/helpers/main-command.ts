import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

// How a test starts the real `pausepoint` command as a child process: the
// build (dist/main.js) when it is newer than every file under src/, as in CI,
// which builds before it tests; otherwise src/main.ts under tsx. Both run the
// same code; the build starts about 1.5 s sooner, and the suite starts dozens.

const ROOT = new URL('../../', import.meta.url).pathname;
const BUILT = join(ROOT, 'dist/main.js');

function newestUnder(path: string): number {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(stat.mtimeMs, ...readdirSync(path).map((entry) => newestUnder(join(path, entry))));
}

let decided: boolean | undefined;
/** True when dist/ was built after the last change under src/ (checked once per test file). */
export function buildIsCurrent(): boolean {
  decided ??= existsSync(BUILT) && statSync(BUILT).mtimeMs >= newestUnder(join(ROOT, 'src'));
  return decided;
}

/** Node's arguments that run `pausepoint` (add the command's own after them). */
export function mainCommand(): string[] {
  return buildIsCurrent() ? [BUILT] : ['--import', import.meta.resolve('tsx'), join(ROOT, 'src/main.ts')];
}
