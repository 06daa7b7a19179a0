// CPU counters read every SAMPLE_MS while a benchmark runs, so that a span
// known only afterwards (from the first timed arrival at a receiver to the
// last) can be costed exactly: per process, for the database server's
// processes, for this process and for the whole machine.
import { readCpuSeconds, readMachineCpu, readProcessTreeCpuSeconds } from './proc.js';

const SAMPLE_MS = 50;

interface Sample {
  /** Date.now() when read, as the receiver stamps arrivals. */
  at: number;
  machine: number;
  self: number;
  /** The database server's processes (its postmaster and backends); 0 without one. */
  database: number;
  /** The watched process (the sender); NaN once it has exited. */
  watched: number;
}

/** CPU seconds spent in a span, by whom, and the span's length. */
export interface CpuSpan {
  /** The samples' times that bound it. */
  from: number;
  to: number;
  seconds: number;
  machine: number;
  self: number;
  database: number;
  watched: number;
}

export interface CpuSampler {
  /** Stops sampling. */
  stop(): void;
  /** The CPU spent between the last sample at or before `from` and the first at or after `to`. */
  between(from: number, to: number): CpuSpan;
}

/**
 * Samples until stopped. `databaseServer` is the pid of the database server's
 * parent process (PostgreSQL's postmaster), counted with its children;
 * `watched`, the sender's pid.
 */
export function sampleCpu(input: { watched: number; databaseServer?: number | undefined }): CpuSampler {
  const samples: Sample[] = [];
  const read = () => {
    const { user, system } = process.cpuUsage();
    let watched = Number.NaN;
    try {
      watched = readCpuSeconds(input.watched);
    } catch {
      // It has exited.
    }
    samples.push({
      at: Date.now(),
      machine: readMachineCpu().busy,
      self: (user + system) / 1e6,
      database: input.databaseServer === undefined ? 0 : readProcessTreeCpuSeconds(input.databaseServer),
      watched,
    });
  };
  read();
  const timer = setInterval(read, SAMPLE_MS);
  return {
    stop: () => {
      clearInterval(timer);
      read();
    },
    between(from, to) {
      const first = [...samples].reverse().find((sample) => sample.at <= from) ?? samples[0]!;
      const last = samples.find((sample) => sample.at >= to) ?? samples[samples.length - 1]!;
      return {
        from: first.at,
        to: last.at,
        seconds: (last.at - first.at) / 1000,
        machine: last.machine - first.machine,
        self: last.self - first.self,
        database: last.database - first.database,
        watched: last.watched - first.watched,
      };
    },
  };
}
