// Printing: the machine the figures came from, and plain-text tables.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { machineIdleShare } from './proc.js';
import { ROOT } from './service.js';

export async function machineSummary(): Promise<string> {
  const idle = await machineIdleShare();
  let model = cpus()[0]?.model ?? 'unknown';
  try {
    model = /^model name\s*:\s*(.*)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? model;
  } catch {
    // not Linux
  }
  const load = loadavg()
    .map((value) => value.toFixed(2))
    .join(' ');
  return [
    `date ${new Date().toISOString()}`,
    `cpus ${cpus().length} × ${model}`,
    `memory ${(totalmem() / 2 ** 30).toFixed(1)} GiB`,
    `node ${process.version}`,
    `load average before the run ${load}`,
    `CPU idle over the 2 s before the run ${(idle * 100).toFixed(0)}%`,
    `checkout at ${gitCommit()}`,
  ].join('; ');
}

function gitCommit(): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src'], { cwd: ROOT, encoding: 'utf8' }).trim();
    return dirty ? `${head} (src/ has uncommitted changes)` : head;
  } catch {
    return 'unknown';
  }
}

/** A table with a header row; numbers right-aligned. */
export function table(header: string[], rows: Array<Array<string | number>>): string {
  const cells = [header, ...rows.map((row) => row.map(String))];
  const widths = header.map((_, column) => Math.max(...cells.map((row) => (row[column] ?? '').length)));
  const line = (row: string[]) =>
    `| ${row.map((cell, column) => (/^[-\d.,%×]+( ms| µs| MiB| s)?$/.test(cell) ? cell.padStart(widths[column]!) : cell.padEnd(widths[column]!))).join(' | ')} |`;
  return [
    line(cells[0]!),
    `|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`,
    ...cells.slice(1).map(line),
  ].join('\n');
}

export const ms = (value: number) => `${value.toFixed(value < 10 ? 2 : 1)} ms`;
export const mib = (value: number) => `${value.toFixed(1)} MiB`;
/** MiB shown with its decimal-megabyte equivalent. */
export const mibMb = (value: number) => `${value.toFixed(1)} MiB (${toMB(value).toFixed(1)} MB)`;
export const toMB = (mebibytes: number) => (mebibytes * 2 ** 20) / 1e6;
export const int = (value: number) => Math.round(value).toLocaleString('en-US');
export const pct = (value: number) => `${(value * 100).toFixed(1)}%`;
export const verdict = (pass: boolean) => (pass ? 'PASS' : 'FAIL');
