/**
 * A task run on a timer that never keeps the process alive, one run at a time, with its
 * failures reported rather than thrown.
 */

/** Runs `task` every `intervalMs` until closed; a run still going when the next is due is not doubled. */
export class Periodic {
  #timer: NodeJS.Timeout | null = null;
  #running: Promise<void> | null = null;

  constructor(
    private readonly intervalMs: number,
    private readonly task: () => Promise<unknown>,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Starts the timer. */
  start(): void {
    this.#timer = setInterval(() => void this.runNow(), this.intervalMs);
    this.#timer.unref();
  }

  /** Runs the task now unless a run is under way; resolves when that run ends. */
  runNow(): Promise<void> {
    this.#running ??= this.task()
      .then(() => undefined, this.onError)
      .finally(() => {
        this.#running = null;
      });
    return this.#running;
  }

  /** Stops the timer and waits for a run under way. */
  async close(): Promise<void> {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
    await this.#running;
  }
}

/**
 * Calls `batch` until it returns fewer than `size` items; returns how many in all. Between
 * two batches it waits for the event loop's next turn: a storage that answers without I/O
 * (memory, SQLite) does a batch's work synchronously, and a drain of 200,000 items must not
 * hold requests up for seconds, only for one batch at a time.
 */
export async function drainInBatches(size: number, batch: () => Promise<number>): Promise<number> {
  let total = 0;
  for (;;) {
    const done = await batch();
    total += done;
    if (done < size) return total;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}
