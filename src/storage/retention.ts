/**
 * Retention: purges terminal messages older than the configured age, in bounded batches,
 * so storage does not grow without end.
 */
import type { Emit } from '../events.js';
import type { RetentionOptions } from '../options.js';
import type { Storage } from './contract.js';

/** Runs `storage.purge` on a timer until closed. */
export class RetentionSweeper {
  #timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly storage: Storage,
    private readonly config: Required<RetentionOptions>,
    private readonly now: () => number,
    private readonly emit: Emit,
  ) {}

  /** Starts sweeping every `intervalMs` (the timer does not keep the process alive). */
  start(): void {
    this.#timer = setInterval(() => {
      this.sweep().catch((error: unknown) => this.emit('error', { error, source: 'storage' }));
    }, this.config.intervalMs);
    this.#timer.unref();
  }

  /** Purges everything due now, one batch at a time; returns how many messages went. */
  async sweep(): Promise<number> {
    const before = this.now() - this.config.maxAgeMs;
    let total = 0;
    for (;;) {
      const deleted = await this.storage.purge(before, this.config.batchSize);
      total += deleted;
      if (deleted < this.config.batchSize) return total;
    }
  }

  /** Stops the timer. */
  close(): void {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
  }
}
