// What every benchmark script shares: cleanup that runs however the script
// ends (success, error, Ctrl-C, the overall time limit), temp folders, child
// processes on free ports, and bounded waiting.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

type Cleanup = () => Promise<void> | void;

const cleanups: Cleanup[] = [];
/** Children still running, killed synchronously on 'exit' if cleanup never got to them. */
const liveChildren = new Set<ChildProcess>();
/** Temp folders still present, removed synchronously on 'exit' as a last resort. */
const liveDirs = new Set<string>();

/** Runs `fn` when the script ends, newest first. */
export function onCleanup(fn: Cleanup): void {
  cleanups.push(fn);
}

let cleaningUp: Promise<void> | undefined;
function runCleanups(): Promise<void> {
  cleaningUp ??= (async () => {
    while (cleanups.length > 0) {
      const fn = cleanups.pop()!;
      try {
        await fn();
      } catch (error) {
        console.error('cleanup step failed:', error instanceof Error ? error.message : error);
      }
    }
  })();
  return cleaningUp;
}

process.on('exit', () => {
  for (const child of liveChildren) child.kill('SIGKILL');
  for (const dir of liveDirs) rmSync(dir, { recursive: true, force: true });
});

/**
 * Runs a benchmark's main function with cleanup on every path and a hard
 * time limit, then exits: 0 on success, 1 on error or timeout, 130 on Ctrl-C.
 */
export function runBenchmark(name: string, main: () => Promise<void>, options: { maxMinutes: number }): void {
  const finish = async (code: number) => {
    await runCleanups();
    process.exit(code);
  };
  const limit = setTimeout(() => {
    console.error(`${name}: gave up after ${options.maxMinutes} min (the overall time limit); cleaning up.`);
    void finish(1);
  }, options.maxMinutes * 60_000);
  limit.unref();
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      console.error(`${name}: ${signal}; cleaning up.`);
      void finish(130);
    });
  }
  main().then(
    () => finish(0),
    (error) => {
      console.error(`${name}: FAILED:`, error instanceof Error ? (error.stack ?? error.message) : error);
      void finish(1);
    },
  );
}

/** A fresh temp folder, removed at cleanup. */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), `${prefix}-`));
  liveDirs.add(dir);
  onCleanup(() => {
    rmSync(dir, { recursive: true, force: true });
    liveDirs.delete(dir);
  });
  return dir;
}

/** A port on 127.0.0.1 that was free a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => (port ? resolve(port) : reject(new Error('no free port'))));
    });
  });
}

export interface Child {
  name: string;
  pid: number;
  url: string;
  /** The last lines the child wrote, for error messages. */
  output(): string;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves when it has exited. */
  stop(graceMs?: number): Promise<void>;
}

/**
 * Starts `command args` and waits (bounded) until GET `url + readyPath`
 * answers 200. Stopped at cleanup if the script has not stopped it already.
 */
export async function startChild(options: {
  name: string;
  command: string;
  args: string[];
  env: Record<string, string>;
  url: string;
  readyPath: string;
  timeoutMs?: number;
}): Promise<Child> {
  const child = spawn(options.command, options.args, {
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  liveChildren.add(child);
  const lines: string[] = [];
  const keep = (chunk: Buffer) => {
    lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    if (lines.length > 40) lines.splice(0, lines.length - 40);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  let exitCode: number | string | null = null;
  const exited = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      exitCode = code ?? signal;
      liveChildren.delete(child);
      resolve();
    });
  });
  if (child.pid === undefined) throw new Error(`${options.name}: could not start ${options.command}`);

  let stopping: Promise<void> | undefined;
  const handle: Child = {
    name: options.name,
    pid: child.pid,
    url: options.url,
    output: () => lines.join('\n'),
    stop(graceMs = 15_000) {
      stopping ??= (async () => {
        if (exitCode !== null) return;
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
        await exited;
        clearTimeout(timer);
      })();
      return stopping;
    },
  };
  onCleanup(() => handle.stop());

  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  for (let attempt = 0; attempt < 1000; attempt++) {
    if (exitCode !== null) {
      throw new Error(`${options.name} exited (${exitCode}) before it was ready:\n${handle.output()}`);
    }
    try {
      const response = await fetch(options.url + options.readyPath, { signal: AbortSignal.timeout(2000) });
      await response.arrayBuffer();
      if (response.ok) return handle;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) break;
    await sleep(100);
  }
  await handle.stop();
  throw new Error(`${options.name} was not ready within ${options.timeoutMs ?? 30_000} ms:\n${handle.output()}`);
}

/** Command-line flags: --name, --name=value. */
export function parseFlags(argv = process.argv.slice(2)): Map<string, string> {
  const flags = new Map<string, string>();
  for (const arg of argv) {
    const match = /^--([a-z-]+)(?:=(.*))?$/.exec(arg);
    if (!match) throw new Error(`unknown argument "${arg}" (flags look like --name or --name=value)`);
    flags.set(match[1]!, match[2] ?? 'true');
  }
  return flags;
}

export function numberFlag(flags: Map<string, string>, name: string, fallback: number): number {
  const raw = flags.get(name);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} must be a positive number, got "${raw}"`);
  return value;
}

export function checkFlags(flags: Map<string, string>, known: string[]): void {
  for (const name of flags.keys()) {
    if (!known.includes(name))
      throw new Error(`unknown flag --${name}; known: ${known.map((k) => `--${k}`).join(' ')}`);
  }
}
