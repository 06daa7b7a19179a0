// A process's memory and CPU time as the kernel counts them, from /proc/<pid>.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

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

/** The fields of /proc/<pid>/stat after the parenthesised command name: field N (1-based, as proc(5) numbers them) is at N - 3. */
function statFields(pid: number | string): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

const clockTicks = () => {
  ticksPerSecond ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  return ticksPerSecond;
};

/** User plus system CPU seconds the process has used so far (/proc/<pid>/stat: utime, stime). */
export function readCpuSeconds(pid: number): number {
  const fields = statFields(pid);
  return (Number(fields[11]) + Number(fields[12])) / clockTicks();
}

/**
 * CPU seconds so far of a server process and its children (PostgreSQL's
 * postmaster and its backends): the live ones' own, and the parent's count of
 * those that have exited (cutime, cstime), so a backend that ends mid-span
 * takes nothing with it.
 */
export function readProcessTreeCpuSeconds(parent: number): number {
  const own = statFields(parent);
  let ticks = Number(own[11]) + Number(own[12]) + Number(own[13]) + Number(own[14]);
  for (const entry of readdirSync('/proc')) {
    if (entry.charCodeAt(0) > 57) continue; // not a pid
    try {
      const fields = statFields(entry);
      if (Number(fields[1]) === parent) ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // It exited while being read; its parent counts it now.
    }
  }
  return ticks / clockTicks();
}

/** The parent of a process (/proc/<pid>/stat: ppid), or undefined when it is not on this machine. */
export function parentOf(pid: number): number | undefined {
  try {
    return Number(statFields(pid)[1]);
  } catch {
    return undefined;
  }
}

/** Busy and total CPU seconds of the whole machine so far, summed over cores (/proc/stat). */
export function readMachineCpu(): { busy: number; total: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0]!;
  const [user, nice, system, idle, iowait, irq, softirq, steal] = line
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number) as number[];
  const busy = user! + nice! + system! + irq! + softirq! + steal!;
  return { busy: busy / clockTicks(), total: (busy + idle! + iowait!) / clockTicks() };
}

/** The share of the machine's CPU that was idle over the next `ms`. */
export async function machineIdleShare(ms = 2000): Promise<number> {
  const before = readMachineCpu();
  await new Promise((resolve) => setTimeout(resolve, ms));
  const after = readMachineCpu();
  return 1 - (after.busy - before.busy) / Math.max(1e-9, after.total - before.total);
}
