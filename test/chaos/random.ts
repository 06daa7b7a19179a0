// Seeded randomness for the chaos test, so a failing run can be repeated with
// CHAOS_SEED=<seed>. The seed fixes every choice the test makes (which call,
// which pause, when to kill); the interleaving with the service's own timing
// still varies from run to run, so a re-run makes a failure likely, not certain.

export interface Random {
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [min, max]. */
  int(min: number, max: number): number;
  chance(probability: number): boolean;
  pick<T>(items: readonly T[]): T;
  /** An independent stream for one actor, derived from this one's seed. */
  fork(label: number): Random;
}

/** The seed from CHAOS_SEED, or a fresh one. */
export function chaosSeed(): number {
  const given = process.env.CHAOS_SEED;
  if (given === undefined || given === '') return Math.floor(Math.random() * 2 ** 32);
  const seed = Number(given);
  if (!Number.isInteger(seed) || seed < 0 || seed >= 2 ** 32) {
    throw new Error(`CHAOS_SEED must be a whole number below 2^32, got "${given}"`);
  }
  return seed;
}

/** mulberry32: small, fast and good enough to pick test actions. */
export function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
  return {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    chance: (probability) => next() < probability,
    pick(items) {
      if (items.length === 0) throw new Error('pick from an empty list');
      return items[Math.floor(next() * items.length)]!;
    },
    fork: (label) => seededRandom(Math.imul(seed ^ 0x9e3779b9, label + 1) >>> 0),
  };
}
