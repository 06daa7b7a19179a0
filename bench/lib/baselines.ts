// The two baselines the API benchmarks compare against, each its own process
// as the service is: a bare Fastify hello-world (bench/hello-world.ts) and a
// loop of the same database work with the plain driver (raw-db-loop.ts).
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { type Child, freePort, startChild } from './harness.js';
import type { RawLoopInput, RawLoopResult } from './raw-db-loop.js';
import { ROOT } from './service.js';

const execFileAsync = promisify(execFile);

/**
 * bench/hello-world.ts on a free port, ready once GET / answers; given the
 * service's SQLite file and an API key, it also serves the floor read (GET /floor/:id).
 */
export async function startHelloWorld(floor?: { sqliteFile: string; apiKey: string }): Promise<Child> {
  const port = await freePort();
  const floorEnv: Record<string, string> = floor
    ? { FLOOR_DATABASE: floor.sqliteFile, FLOOR_KEY_SHA256: createHash('sha256').update(floor.apiKey).digest('hex') }
    : {};
  return startChild({
    name: 'hello-world',
    command: process.execPath,
    args: ['--import', 'tsx', join(ROOT, 'bench/hello-world.ts')],
    env: { PORT: String(port), ...floorEnv },
    url: `http://127.0.0.1:${port}`,
    readyPath: '/',
  });
}

/** One run of bench/lib/raw-db-loop.ts, bounded to its seconds per operation plus start-up. */
export async function runRawLoop(input: RawLoopInput): Promise<RawLoopResult[]> {
  const { stdout } = await execFileAsync(
    process.execPath,
    ['--import', 'tsx', join(ROOT, 'bench/lib/raw-db-loop.ts'), JSON.stringify(input)],
    { cwd: ROOT, timeout: (input.seconds * input.operations.length + 60) * 1000, maxBuffer: 2 ** 20 },
  );
  return JSON.parse(stdout.trim().split('\n').pop() ?? '[]') as RawLoopResult[];
}
