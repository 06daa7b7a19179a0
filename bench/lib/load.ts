// Load generation with autocannon's programmatic API, reduced to the figures
// the benchmarks print: requests/s of 2xx answers and latency percentiles.
import autocannon, { type Options, type Result } from 'autocannon';
import { percentile } from './stats.js';

export interface LoadFigures {
  title: string;
  /** 2xx answers per second over the whole run. */
  rps: number;
  /** Latency in milliseconds. */
  p50: number;
  p99: number;
  mean: number;
  max: number;
  ok: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  durationS: number;
}

type LoadOptions = Options & { title: string; allowErrors?: boolean; maxSeconds?: number };

/**
 * One autocannon run, bounded by `duration` seconds or `amount` requests (and
 * then by a time limit of its own). Throws if any answer was not 2xx unless
 * `allowErrors`, since a fast error is not a fast success.
 */
export async function runLoad(options: LoadOptions): Promise<LoadFigures> {
  return (await runAll([options], options.title)).figures;
}

/**
 * The same load split over several instances of the service at once: one
 * autocannon per base URL, `connections` shared out between them (so the
 * total matches a run against one), figures combined: req/s summed,
 * latencies pooled. `each` has every instance's own figures.
 */
export async function runLoadAcross(
  baseUrls: string[],
  options: Omit<LoadOptions, 'url'>,
): Promise<LoadFigures & { each: LoadFigures[] }> {
  const connections = Math.max(1, Math.round((options.connections ?? 10) / baseUrls.length));
  const runs = baseUrls.map((url, i) => ({ ...options, url, connections, title: `${options.title} [${i + 1}]` }));
  const { figures, each } = await runAll(runs, options.title);
  return { ...figures, each };
}

/** Runs the autocannons at once and combines their figures. */
async function runAll(runs: LoadOptions[], title: string): Promise<{ figures: LoadFigures; each: LoadFigures[] }> {
  const outcomes = await Promise.all(runs.map(runOne));
  const latencies = outcomes.flatMap((outcome) => outcome.latencies);
  const sum = (pick: (figures: LoadFigures) => number) =>
    outcomes.reduce((total, outcome) => total + pick(outcome.figures), 0);
  const figures: LoadFigures = {
    title,
    rps: sum((f) => f.rps),
    ...latencyFigures(latencies),
    ok: sum((f) => f.ok),
    non2xx: sum((f) => f.non2xx),
    errors: sum((f) => f.errors),
    timeouts: sum((f) => f.timeouts),
    durationS: Math.max(...outcomes.map((outcome) => outcome.figures.durationS)),
  };
  return { figures, each: outcomes.map((outcome) => outcome.figures) };
}

function latencyFigures(latencies: number[]): Pick<LoadFigures, 'p50' | 'p99' | 'mean' | 'max'> {
  return {
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    mean: latencies.reduce((sum, value) => sum + value, 0) / Math.max(1, latencies.length),
    max: latencies.reduce((most, value) => Math.max(most, value), 0),
  };
}

async function runOne(options: LoadOptions): Promise<{ figures: LoadFigures; latencies: number[] }> {
  const { allowErrors, maxSeconds, ...rest } = options;
  const instance = autocannon({ connections: 10, pipelining: 1, timeout: 10, ...rest });
  const limitS = maxSeconds ?? (rest.amount !== undefined ? 600 : (rest.duration ?? 10) + 30);
  // autocannon's own histogram keeps whole milliseconds; its response event
  // carries the hrtime duration, so the percentiles here keep sub-ms detail.
  const latencies: number[] = [];
  instance.on('response', (_client: unknown, statusCode: number, _bytes: number, responseTime: number) => {
    if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime);
  });
  const limit = setTimeout(() => instance.stop(), limitS * 1000);
  let result: Result;
  try {
    result = await instance;
  } finally {
    clearTimeout(limit);
  }
  const figures: LoadFigures = {
    title: options.title,
    rps: result['2xx'] / result.duration,
    ...latencyFigures(latencies),
    ok: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    durationS: result.duration,
  };
  if (!allowErrors && (figures.non2xx > 0 || figures.errors > 0)) {
    throw new Error(
      `${options.title}: ${figures.non2xx} non-2xx answers and ${figures.errors} errors ` +
        `(status counts ${JSON.stringify(result.statusCodeStats)})`,
    );
  }
  if (rest.amount !== undefined && figures.ok < rest.amount) {
    throw new Error(`${options.title}: only ${figures.ok} of ${rest.amount} requests succeeded within ${limitS} s`);
  }
  return { figures, latencies };
}

/**
 * Open loop: calls `send(i)` for i = 0…count-1 at start + i/rate, whether or
 * not earlier calls have finished, then waits for all (and throws the first failure). Returns the rate the
 * calls were actually issued at (lower than `rate` only if this process fell behind).
 */
export async function atSteadyRate(
  count: number,
  rate: number,
  send: (i: number) => Promise<void>,
): Promise<{ issuedPerSecond: number }> {
  const inFlight: Promise<void>[] = [];
  // Caught at once, so a failure mid-run is not an unhandled rejection; the first is rethrown at the end.
  const failures: unknown[] = [];
  const start = performance.now();
  for (let i = 0; i < count; i++) {
    const wait = start + (i * 1000) / rate - performance.now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    inFlight.push(send(i).catch((error: unknown) => void failures.push(error)));
  }
  const issuedPerSecond = count / ((performance.now() - start) / 1000);
  await Promise.all(inFlight);
  if (failures.length > 0) throw failures[0];
  return { issuedPerSecond };
}
