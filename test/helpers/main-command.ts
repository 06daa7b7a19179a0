import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

// How a test starts the real `pausepoint` command as a child process: the
// build (dist/main.js) when it is newer than every file under src/, as in CI,
// which builds before it tests; otherwise src/main.ts under tsx. Both run the
// same code; the build starts about 1.5 s sooner, and the suite starts dozens.

const ROOT = new URL('../../', import.meta.url).pathname;
const BUILT = join(ROOT, 'dist/main.js');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : [join(dir, entry.name)],
  );
}

/** A file under src/ changed since dist/ was built (or dist/main.js itself when there is no build); undefined when the build is current. */
export function staleSource(): string | undefined {
  if (!existsSync(BUILT)) return BUILT;
  const built = statSync(BUILT).mtimeMs;
  return sourceFiles(join(ROOT, 'src')).find((file) => statSync(file).mtimeMs > built);
}

let current: boolean | undefined;
/** Node's arguments that run `pausepoint` (add the command's own after them); decided once per test file. */
export function mainCommand(): string[] {
  current ??= staleSource() === undefined;
  return current ? [BUILT] : ['--import', import.meta.resolve('tsx'), join(ROOT, 'src/main.ts')];
}
