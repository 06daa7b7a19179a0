import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { dirname, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../src/config.js';
import { openStore, type Store } from '../../src/store/store.js';
import { mainCommand } from './main-command.js';

// pausepoint as a real operating-system process (`node --import tsx src/main.ts
// serve`, or the build: `node dist/main.js serve`), for tests of what only a
// process can show: signals, kill -9, restarts, several instances over one
// database. Every child is tracked and killed by killAllServices() (call it in
// afterEach) and, failing that, when the test process exits, so a failed test
// never leaves a service running.

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const STARTUP_TIMEOUT_MS = 20_000;
const EXIT_TIMEOUT_MS = 10_000;

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface LogLine {
  stream: 'stdout' | 'stderr';
  line: string;
  at: number;
}

export interface ServiceProcess {
  name: string;
  pid: number;
  /** http://127.0.0.1:<port>, as its "started" line says; undefined for ROLE=worker, which does not listen. */
  readonly url: string | undefined;
  /** Every line the process wrote, both streams, in arrival order. */
  readonly lines: LogLine[];
  /** The stdout lines that are JSON (pino's log records). */
  logs(): Array<Record<string, any>>;
  /** Resolves when the process has exited, however it ended. */
  readonly exited: Promise<Exit>;
  /** The exit, once it happened. */
  readonly exit: Exit | undefined;
  /** Sends the signal and waits (bounded) for the exit; SIGKILLs it if a SIGTERM is not obeyed in time. */
  kill(signal: 'SIGTERM' | 'SIGKILL', timeoutMs?: number): Promise<Exit>;
  /** Resolves with the first log record (already written or to come) that matches. */
  waitForLog(match: (record: Record<string, any>) => boolean, timeoutMs?: number): Promise<Record<string, any>>;
}

export interface SpawnOptions {
  databaseUrl: string;
  /** The master secret: pass the same one to every instance and across restarts. */
  secretKey: string;
  role?: 'all' | 'api' | 'worker';
  /** NODE_EXTRA_CA_CERTS for the child (the test HTTPS receiver's caFile). */
  caFile?: string;
  /** More environment (overrides the defaults below). */
  env?: Record<string, string>;
  name?: string;
  startupTimeoutMs?: number;
  /**
   * Run src/ through tsx, or the build in dist/, which starts about twice as fast (build it first).
   * Unset: the build when it is current, else src/ (test/helpers/main-command.ts).
   */
  entry?: 'source' | 'build';
}

const running = new Set<ChildProcess>();
let exitHookInstalled = false;

export const newSecretKey = () => randomBytes(32).toString('hex');

/**
 * For tests that kill a process holding claimed deliveries or emails: those
 * are attempted again when the claim's lease runs out, 2 s after the claim
 * instead of the default 10 s (an attempt still must end within it).
 */
export const SHORT_LEASE = { OUTBOX_LEASE_MS: '2000', OUTBOUND_TIMEOUT_MS: '1500' };

/**
 * Starts a service process and resolves once it is ready: it logged "pausepoint
 * started" and (unless ROLE=worker) answers GET /health with 200. Rejects with
 * its output if it exits or is not ready within the startup timeout.
 */
export async function spawnService(options: SpawnOptions): Promise<ServiceProcess> {
  const role = options.role ?? 'all';
  const name = options.name ?? `service-${role}`;
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    // The kernel picks a free port as the service listens; its "started" line says which. (A port
    // found free beforehand could be taken by another test's process before the service binds it.)
    PORT: '0',
    HOST: '127.0.0.1',
    DATABASE_URL: options.databaseUrl,
    SECRET_KEY: options.secretKey,
    LOG_LEVEL: 'info',
    AUTH_RATE_LIMIT: '1000/60',
    WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8',
    WEBHOOK_RETRY_SCHEDULE_MS: '200,400,800',
    ROLE: role,
    ...(options.caFile ? { NODE_EXTRA_CA_CERTS: options.caFile } : {}),
    ...(process.env.TMPDIR ? { TMPDIR: process.env.TMPDIR } : {}),
    ...options.env,
  };
  installExitHook();
  const args =
    options.entry === 'build'
      ? ['dist/main.js', 'serve']
      : options.entry === 'source'
        ? ['--import', 'tsx', 'src/main.ts', 'serve']
        : [...mainCommand(), 'serve'];
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);

  const lines: LogLine[] = [];
  const lineWaiters = new Set<() => void>();
  const collect = (stream: 'stdout' | 'stderr') => (line: string) => {
    lines.push({ stream, line, at: Date.now() });
    for (const wake of lineWaiters) wake();
  };
  createInterface({ input: child.stdout! }).on('line', collect('stdout'));
  createInterface({ input: child.stderr! }).on('line', collect('stderr'));

  let exit: Exit | undefined;
  // 'close', not 'exit': it comes once the output pipes are drained too, so
  // the last lines a process wrote (its "stopped") are in `lines` by then.
  const exited = new Promise<Exit>((resolveExit) => {
    child.once('close', (code, signal) => {
      exit = { code, signal };
      running.delete(child);
      for (const wake of lineWaiters) wake();
      resolveExit(exit);
    });
  });
  // A spawn failure also ends in 'exit' or 'error'; make 'error' visible as an exit.
  child.once('error', (error) => {
    lines.push({ stream: 'stderr', line: `spawn error: ${error.message}`, at: Date.now() });
    if (!exit) {
      exit = { code: -1, signal: null };
      running.delete(child);
      for (const wake of lineWaiters) wake();
    }
  });

  const parse = (line: string): Record<string, any> | undefined => {
    if (!line.startsWith('{')) return undefined;
    try {
      return JSON.parse(line);
    } catch {
      return undefined;
    }
  };
  const output = () => lines.map((l) => `  [${l.stream}] ${l.line}`).join('\n');

  let url: string | undefined;
  const service: ServiceProcess = {
    name,
    pid: child.pid ?? -1,
    get url() {
      return url;
    },
    lines,
    logs: () => lines.filter((l) => l.stream === 'stdout').flatMap((l) => parse(l.line) ?? []),
    exited,
    get exit() {
      return exit;
    },
    async kill(signal, timeoutMs = EXIT_TIMEOUT_MS) {
      if (exit) return exit;
      child.kill(signal);
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'late'>((resolveLate) => {
        timer = setTimeout(() => resolveLate('late'), timeoutMs);
      });
      const result = await Promise.race([exited, late]);
      clearTimeout(timer);
      if (result !== 'late') return result;
      child.kill('SIGKILL');
      await exited;
      throw new Error(`${name} did not exit within ${timeoutMs} ms of ${signal}; killed it\n${output()}`);
    },
    waitForLog(match, timeoutMs = 10_000) {
      return new Promise((resolveLog, reject) => {
        let seen = 0;
        const check = () => {
          for (; seen < lines.length; seen++) {
            const record = lines[seen]!.stream === 'stdout' ? parse(lines[seen]!.line) : undefined;
            if (record && match(record)) return finish(() => resolveLog(record));
          }
          if (exit) finish(() => reject(new Error(`${name} exited (${JSON.stringify(exit)}) first\n${output()}`)));
        };
        const timer = setTimeout(
          () => finish(() => reject(new Error(`${name}: no matching log line within ${timeoutMs} ms\n${output()}`))),
          timeoutMs,
        );
        const finish = (settle: () => void) => {
          clearTimeout(timer);
          lineWaiters.delete(check);
          settle();
        };
        lineWaiters.add(check);
        check();
      });
    },
  };

  const timeoutMs = options.startupTimeoutMs ?? STARTUP_TIMEOUT_MS;
  const deadline = Date.now() + timeoutMs;
  try {
    const started = await service.waitForLog((record) => record.msg === 'pausepoint started', timeoutMs);
    url = role === 'worker' ? undefined : String(started.url);
    if (service.url) await waitForHealth(service, deadline);
  } catch (error) {
    child.kill('SIGKILL');
    await exited;
    throw error;
  }
  return service;
}

async function waitForHealth(service: ServiceProcess, deadline: number): Promise<void> {
  let last = 'no answer';
  while (Date.now() < deadline && !service.exit) {
    try {
      const response = await fetch(`${service.url}/health`, { signal: AbortSignal.timeout(2000) });
      if (response.status === 200) return;
      last = `HTTP ${response.status}`;
    } catch (error) {
      last = (error as Error).message;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${service.name} not healthy in time (${last})`);
}

/** SIGKILLs every service process still running and waits for them to be gone. */
export async function killAllServices(): Promise<void> {
  const children = [...running];
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolveGone) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolveGone();
          child.once('exit', () => resolveGone());
          child.kill('SIGKILL');
        }),
    ),
  );
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // Last resort, e.g. the test run is interrupted: no orphan keeps a port or a database.
  process.once('exit', () => {
    for (const child of running) child.kill('SIGKILL');
  });
}

/** The test's own handle on a service database, to read the raw rows. */
export function openTestStore(databaseUrl: string, secretKey: string): Store {
  return openStore(loadConfig({ DATABASE_URL: databaseUrl, SECRET_KEY: secretKey }).database);
}
