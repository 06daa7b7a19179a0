// Runs the real `pausepoint` command (the build when it is current, else
// src/main.ts under tsx: test/helpers/main-command.ts) as a child process, the
// way a script or CI job does, and watches its output.
import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mainCommand } from '../helpers/main-command.js';

export const ROOT = new URL('../../', import.meta.url).pathname;

// The CLI and the examples import @pausepoint/sdk, which resolves to the
// SDK's build (npm test builds it first; so do typecheck and build).
assertSdkBuilt();

function assertSdkBuilt(): void {
  const built = join(ROOT, 'sdk/dist/index.js');
  const newestSource = Math.max(...sourceFiles(join(ROOT, 'sdk/src')).map((file) => statSync(file).mtimeMs));
  if (!existsSync(built) || statSync(built).mtimeMs < newestSource - 1000) {
    throw new Error('sdk/dist is missing or older than sdk/src: run npm run build:sdk (npm test does it for you)');
  }
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : [join(dir, entry.name)],
  );
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface RunningCli {
  child: ChildProcess;
  readonly stdout: string;
  readonly stderr: string;
  /**
   * Resolves with the first match of `pattern` in stdout or stderr (as they
   * grow); within 45 s by default, as a start under tsx is slow on a busy machine.
   */
  waitFor(pattern: RegExp, stream?: 'stdout' | 'stderr', timeoutMs?: number): Promise<RegExpMatchArray>;
  exited: Promise<CliResult>;
}

/** The environment for a child: the test's, without any PAUSEPOINT_* of the developer running it. */
export function cleanEnv(extra: Record<string, string | undefined> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !name.startsWith('PAUSEPOINT_')) env[name] = value;
  }
  for (const [name, value] of Object.entries(extra)) if (value !== undefined) env[name] = value;
  return env;
}

/** Starts `pausepoint …`; `stdin`, when given, is written to its standard input, which is then closed. */
export function startCli(args: string[], env: Record<string, string | undefined> = {}, stdin?: string): RunningCli {
  return startProcess(process.execPath, [...mainCommand(), ...args], { env: cleanEnv(env), cwd: ROOT, stdin });
}

/** Runs `pausepoint …` to the end. */
export function runCli(args: string[], env: Record<string, string | undefined> = {}): Promise<CliResult> {
  return startCli(args, env).exited;
}

export function startProcess(
  command: string,
  args: string[],
  options: { env: Record<string, string>; cwd: string; stdin?: string | undefined },
): RunningCli {
  const { stdin, ...spawnOptions } = options;
  const child = spawn(command, args, {
    ...spawnOptions,
    stdio: [stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  if (stdin !== undefined) child.stdin!.end(stdin);
  const output = { stdout: '', stderr: '' };
  const listeners = new Set<() => void>();
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    output.stdout += chunk;
    for (const listener of listeners) listener();
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    output.stderr += chunk;
    for (const listener of listeners) listener();
  });
  const exited = new Promise<CliResult>((resolve) => {
    child.on('close', (code, signal) => {
      for (const listener of listeners) listener();
      resolve({ code, signal, stdout: output.stdout, stderr: output.stderr });
    });
  });
  return {
    child,
    get stdout() {
      return output.stdout;
    },
    get stderr() {
      return output.stderr;
    },
    exited,
    waitFor(pattern, stream, timeoutMs = 45_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const text = stream ? output[stream] : `${output.stdout}\n${output.stderr}`;
          const match = text.match(pattern);
          if (match) {
            done();
            resolve(match);
          } else if (child.exitCode !== null || child.signalCode !== null) {
            done();
            reject(new Error(`exited before ${pattern}; stdout: ${output.stdout}\nstderr: ${output.stderr}`));
          }
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`no ${pattern} within ${timeoutMs} ms; stdout: ${output.stdout}\nstderr: ${output.stderr}`));
        }, timeoutMs);
        const done = () => {
          clearTimeout(timer);
          listeners.delete(check);
        };
        listeners.add(check);
        check();
      });
    },
  };
}

/**
 * A folder holding a `pausepoint` executable that runs this checkout's
 * build or src/main.ts (as startCli does), to put first on PATH for scripts that call `pausepoint`.
 */
export function pausepointOnPath(): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'pausepoint-bin-'));
  const file = join(dir, 'pausepoint');
  writeFileSync(
    file,
    `#!/bin/sh\nexec "${process.execPath}" ${mainCommand()
      .map((arg) => `"${arg}"`)
      .join(' ')} "$@"\n`,
  );
  chmodSync(file, 0o755);
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
