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

/**
 * One autocannon run, bounded by `duration` seconds or `amount` requests (and
 * then by a time limit of its own). Throws if any answer was not 2xx unless
 * `allowErrors`, since a fast error is not a fast success.
 */
export async function runLoad(
  options: Options & { title: string; allowErrors?: boolean; maxSeconds?: number },
): Promise<LoadFigures> {
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
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    mean: latencies.reduce((sum, value) => sum + value, 0) / Math.max(1, latencies.length),
    max: latencies.reduce((most, value) => Math.max(most, value), 0),
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
  return figures;
}
