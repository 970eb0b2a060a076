/**
 * Counts events per second over the last ten seconds in ten one-second buckets, so that a
 * connection's TPS in use costs the same at 5 parts a second as at 5,000.
 */

/** Seconds the rate is averaged over. */
export const RATE_SECONDS = 10;

/** Events a second over the last {@link RATE_SECONDS}. */
export class RateMeter {
  readonly #counts = new Array<number>(RATE_SECONDS).fill(0);
  /** The whole second each bucket last counted, epoch seconds. */
  readonly #seconds = new Array<number>(RATE_SECONDS).fill(-1);

  constructor(private readonly now: () => number = Date.now) {}

  /** Counts one event now. */
  add(): void {
    const second = Math.floor(this.now() / 1000);
    const slot = second % RATE_SECONDS;
    if (this.#seconds[slot] !== second) {
      this.#seconds[slot] = second;
      this.#counts[slot] = 0;
    }
    this.#counts[slot]! += 1;
  }

  /** Events a second, averaged over the last {@link RATE_SECONDS} (the current one included), to one decimal. */
  perSecond(): number {
    const second = Math.floor(this.now() / 1000);
    let sum = 0;
    for (let slot = 0; slot < RATE_SECONDS; slot += 1) {
      if (this.#seconds[slot]! > second - RATE_SECONDS) sum += this.#counts[slot]!;
    }
    return Math.round((sum / RATE_SECONDS) * 10) / 10;
  }
}
