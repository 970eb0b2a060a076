/**
 * A seeded pseudo-random generator, for what must repeat exactly under the same seed (the
 * simulated carrier's outcomes, the benchmark's corpus). Not for anything secret.
 */

/** mulberry32: a small, fast PRNG with a 32-bit state; returns numbers in [0, 1). */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
