// CPU accounting around a load run: how busy the servers, this process and
// everything else on the machine were, so a figure taken on a shared machine
// says how much it was disturbed.
import type { LoadFigures } from './load.js';
import { readCpuSeconds, readMachineCpu } from './proc.js';
import { int, ms, pct } from './report.js';

export interface Measured extends LoadFigures {
  /** CPU seconds the server processes used per wall second of the run (1 = one core busy). */
  serverCpu: number;
  /** The same for this (load-generating) process. */
  benchCpu: number;
  /** The same for everything else on the machine: noise. */
  otherCpu: number;
}

/** Runs the load and reports the CPU used meanwhile by the servers `pids`, by this process and by the rest. */
export async function measured(pids: number[], run: () => Promise<LoadFigures>): Promise<Measured> {
  const serversCpu = () => pids.reduce((sum, pid) => sum + readCpuSeconds(pid), 0);
  const serverBefore = serversCpu();
  const benchBefore = process.cpuUsage();
  const machineBefore = readMachineCpu();
  const started = performance.now();
  const figures = await run();
  const wall = (performance.now() - started) / 1000;
  const bench = process.cpuUsage(benchBefore);
  const serverCpu = (serversCpu() - serverBefore) / wall;
  const benchCpu = (bench.user + bench.system) / 1e6 / wall;
  const machineCpu = (readMachineCpu().busy - machineBefore.busy) / wall;
  return { ...figures, serverCpu, benchCpu, otherCpu: Math.max(0, machineCpu - serverCpu - benchCpu) };
}

export const MEASURED_HEADER = [
  'req/s',
  'p50',
  'p99',
  'max',
  'answered 2xx',
  'server CPU',
  'CPU/req',
  'bench CPU',
  'other CPU',
];

/** The cells of MEASURED_HEADER for one run. */
export function measuredCells(figures: Measured): string[] {
  return [
    int(figures.rps),
    ms(figures.p50),
    ms(figures.p99),
    ms(figures.max),
    int(figures.ok),
    pct(figures.serverCpu),
    `${int((figures.serverCpu / figures.rps) * 1e6)} µs`,
    pct(figures.benchCpu),
    pct(figures.otherCpu),
  ];
}
