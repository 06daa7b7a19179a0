// A process's memory and CPU time as the kernel counts them, from /proc/<pid>.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';

export interface Memory {
  /** Resident set size now, in MiB (VmRSS). */
  rssMiB: number;
  /** The highest resident set size so far, in MiB (VmHWM). */
  peakMiB: number;
}

export function readMemory(pid: number): Memory {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) => {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
    if (!match) throw new Error(`/proc/${pid}/status has no ${field}`);
    return Number(match[1]);
  };
  return { rssMiB: kib('VmRSS') / 1024, peakMiB: kib('VmHWM') / 1024 };
}

let ticksPerSecond: number | undefined;

/** User plus system CPU seconds the process has used so far (/proc/<pid>/stat). */
export function readCpuSeconds(pid: number): number {
  ticksPerSecond ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond;
}

/** Busy and total CPU seconds of the whole machine so far, summed over cores (/proc/stat). */
export function readMachineCpu(): { busy: number; total: number } {
  ticksPerSecond ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0]!;
  const [user, nice, system, idle, iowait, irq, softirq, steal] = line
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number) as number[];
  const busy = user! + nice! + system! + irq! + softirq! + steal!;
  return { busy: busy / ticksPerSecond, total: (busy + idle! + iowait!) / ticksPerSecond };
}

/** The share of the machine's CPU that was idle over the next `ms`. */
export async function machineIdleShare(ms = 2000): Promise<number> {
  const before = readMachineCpu();
  await new Promise((resolve) => setTimeout(resolve, ms));
  const after = readMachineCpu();
  return 1 - (after.busy - before.busy) / Math.max(1e-9, after.total - before.total);
}

/** CPU seconds so far of the live processes owned by a system user (e.g. every PostgreSQL backend of `postgres`). */
export function readUserCpuSeconds(uid: number): number {
  let seconds = 0;
  for (const entry of readdirSync('/proc')) {
    if (entry.charCodeAt(0) > 57) continue; // not a pid
    try {
      if (statSync(`/proc/${entry}`).uid === uid) seconds += readCpuSeconds(Number(entry));
    } catch {
      // It exited while being read.
    }
  }
  return seconds;
}

/** A system user's numeric id. */
export const uidOf = (user: string): number => Number(execFileSync('id', ['-u', user], { encoding: 'utf8' }).trim());
