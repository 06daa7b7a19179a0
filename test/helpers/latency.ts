import { expect } from 'vitest';

/**
 * Checks a latency the service promises (a long-poll answered within 100 ms
 * of the answer, say) as the quickest of up to `tries` measurements, stopping
 * at the first within `boundMs`. On a loaded machine (CI runs two suites side
 * by side) one try can be slowed by other work; a broken promise — a wake-up
 * that never comes, so a re-check or a timeout answers — misses on every try.
 * `measure` runs one whole try and returns its milliseconds.
 */
export async function expectQuickestWithin(
  what: string,
  boundMs: number,
  measure: () => Promise<number>,
  tries = 3,
): Promise<void> {
  const measured: number[] = [];
  while (measured.length < tries) {
    measured.push(await measure());
    if (measured.at(-1)! < boundMs) return;
  }
  expect(Math.min(...measured), `${what}: ${measured.join(', ')} ms in ${tries} tries`).toBeLessThan(boundMs);
}
