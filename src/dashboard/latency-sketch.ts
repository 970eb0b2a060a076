/**
 * A latency distribution in fixed memory: a log-scale histogram whose bins grow by 2^(1/8)
 * (about 9% each), from 1 ms up to 2^28 ms (about 3 days; longer waits share the last bin),
 * with the exact least and greatest values seen.
 *
 * A histogram rather than a sample of the latencies: its size is the same at 1 message a
 * minute or 10,000 (225 counters), it sees every message rather than a sample of them, and
 * two of them add up exactly, so the hour's and the day's percentiles are the sum of their
 * steps' histograms. A percentile it answers is within about 4.5% of the true one (half a
 * bin), and exact when it is the least or greatest value.
 */

/** Bins per doubling. */
const PER_DOUBLING = 8;
/** The last bin holds everything from 2^28 ms (about 3.1 days) up. */
const BINS = 28 * PER_DOUBLING + 1;

/** Which bin holds `ms`: bin 0 is [0, 1] ms, bin i is (2^((i-1)/8), 2^(i/8)] ms. */
function binOf(ms: number): number {
  if (ms <= 1) return 0;
  return Math.min(BINS - 1, Math.ceil(Math.log2(ms) * PER_DOUBLING));
}

/** What bin `bin` stands for: the geometric middle of its bounds. */
function middleOf(bin: number): number {
  return bin === 0 ? 1 : 2 ** ((bin - 0.5) / PER_DOUBLING);
}

/** Latencies, in milliseconds, counted into log-scale bins. */
export class LatencySketch {
  readonly #bins = new Uint32Array(BINS);
  #count = 0;
  #least = Infinity;
  #greatest = -Infinity;

  /** Latencies counted. */
  get count(): number {
    return this.#count;
  }

  /** Counts one latency of `ms` milliseconds (a negative one, from clocks apart, as 0). */
  add(ms: number): void {
    const value = Math.max(0, ms);
    this.#bins[binOf(value)]! += 1;
    this.#count += 1;
    this.#least = Math.min(this.#least, value);
    this.#greatest = Math.max(this.#greatest, value);
  }

  /** Adds every latency `other` counted to this one. */
  merge(other: LatencySketch): void {
    for (let bin = 0; bin < BINS; bin += 1) this.#bins[bin]! += other.#bins[bin]!;
    this.#count += other.#count;
    this.#least = Math.min(this.#least, other.#least);
    this.#greatest = Math.max(this.#greatest, other.#greatest);
  }

  /**
   * The `p`-quantile (0 < p <= 1) by nearest rank, in milliseconds: the bin where the rank
   * falls, kept within the least and greatest value seen; `null` when nothing was counted.
   */
  quantile(p: number): number | null {
    if (this.#count === 0) return null;
    const rank = Math.max(1, Math.ceil(p * this.#count));
    if (rank === 1) return this.#least;
    if (rank >= this.#count) return this.#greatest;
    let seen = 0;
    for (let bin = 0; bin < BINS; bin += 1) {
      seen += this.#bins[bin]!;
      if (seen >= rank) return Math.min(this.#greatest, Math.max(this.#least, middleOf(bin)));
    }
    return this.#greatest;
  }
}
