/**
 * `Batcher`: coalesces concurrent calls of one step into batches, so a burst of calls pays
 * for one round trip and one commit instead of one each (group commit, as a database does
 * for its own log). Used by the PostgreSQL storage, whose every call is a transaction that
 * waits for its WAL to reach the disk: without it, every request and worker step in flight
 * is a commit of its own, each waiting its turn at the flush.
 *
 * How a batch forms: a call queues its item. While fewer than `maxInFlight` batches are
 * out, what has queued in the current turn of the event loop goes out at the end of the
 * turn; while `maxInFlight` are out, items wait and the next batch takes them all (up to
 * `maxBatch`) as soon as one comes back. So a lone call costs one turn of latency, and
 * under load the batch size follows the load by itself.
 *
 * When a batch fails, nothing of it was kept (it ran as one transaction), and each of its
 * items is run again alone: only the items that fail on their own fail, and a failure the
 * batch caused (a deadlock between two batches, say) costs a retry, not an error.
 */

/** What a {@link Batcher} runs, and how many at once. */
export interface BatcherOptions<I, O> {
  /** Runs `items` as one atomic unit; resolves with one result per item, in order. */
  runBatch: (items: readonly I[]) => Promise<readonly O[]>;
  /** Runs one item alone: a batch of one, and each item of a batch that failed. Absent: `runBatch` of that item alone. */
  runOne?: (item: I) => Promise<O>;
  /** At most this many items per batch. */
  maxBatch: number;
  /** At most this many batches out at once. */
  maxInFlight: number;
  /**
   * The key of an item, where a batch must hold at most one item of each key (a batch of
   * two writes of one row would apply one and not say which): an item whose key is in the
   * batch waits for the next. Absent: items have no keys.
   */
  keyOf?: (item: I) => unknown;
}

interface Queued<I, O> {
  item: I;
  resolve: (value: O) => void;
  reject: (error: unknown) => void;
}

/** Coalesces concurrent {@link Batcher.call}s into batches; see the module comment. */
export class Batcher<I, O> {
  readonly #options: BatcherOptions<I, O>;
  readonly #runOne: (item: I) => Promise<O>;
  #queue: Queued<I, O>[] = [];
  #inFlight = 0;
  #scheduled = false;

  constructor(options: BatcherOptions<I, O>) {
    this.#options = options;
    this.#runOne = options.runOne ?? (async (item) => (await options.runBatch([item]))[0]!);
  }

  /** Runs `item` in the next batch; resolves with its own result. */
  call(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.#queue.push({ item, resolve, reject });
      if (!this.#scheduled && this.#inFlight < this.#options.maxInFlight) {
        this.#scheduled = true;
        setImmediate(() => {
          this.#scheduled = false;
          this.#dispatch();
        });
      }
    });
  }

  /** Sends what is queued, as long as there is room. */
  #dispatch(): void {
    const { maxBatch, maxInFlight } = this.#options;
    while (this.#queue.length > 0 && this.#inFlight < maxInFlight) {
      const batch = this.#take(maxBatch);
      this.#inFlight += 1;
      void this.#run(batch).finally(() => {
        this.#inFlight -= 1;
        this.#dispatch();
      });
    }
  }

  /** Takes the next batch off the queue: its first `maxBatch` items, of distinct keys if items have keys. */
  #take(maxBatch: number): Queued<I, O>[] {
    const { keyOf } = this.#options;
    if (keyOf === undefined) {
      const batch = this.#queue.length <= maxBatch ? this.#queue : this.#queue.slice(0, maxBatch);
      this.#queue = batch === this.#queue ? [] : this.#queue.slice(maxBatch);
      return batch;
    }
    const batch: Queued<I, O>[] = [];
    const rest: Queued<I, O>[] = [];
    const keys = new Set<unknown>();
    for (const queued of this.#queue) {
      const key = keyOf(queued.item);
      if (batch.length < maxBatch && !keys.has(key)) {
        keys.add(key);
        batch.push(queued);
      } else rest.push(queued);
    }
    this.#queue = rest;
    return batch;
  }

  async #run(batch: readonly Queued<I, O>[]): Promise<void> {
    const { runBatch } = this.#options;
    const runOne = this.#runOne;
    if (batch.length === 1) {
      await runOne(batch[0]!.item).then(batch[0]!.resolve, batch[0]!.reject);
      return;
    }
    let results: readonly O[];
    try {
      results = await runBatch(batch.map((queued) => queued.item));
    } catch {
      // Nothing of the batch was kept: each item again on its own, so only those that
      // fail alone fail (with their own error).
      await Promise.all(batch.map((queued) => runOne(queued.item).then(queued.resolve, queued.reject)));
      return;
    }
    batch.forEach((queued, i) => queued.resolve(results[i]!));
  }
}
