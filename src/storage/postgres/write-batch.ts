/**
 * Gathers the compare-and-set writes of one event-loop turn into one statement. A write
 * joins the next statement out unless a write of the same row is already in it (of two
 * writes of one row in one `UPDATE ... FROM`, one would apply and the answer would not say
 * which): it then waits for the statement after. Each write is still applied or not on its
 * own, by its version. A statement that fails changed nothing (it is atomic): its writes
 * are each sent again alone, so only a write that fails on its own fails (two statements
 * deadlocking on each other's rows cost a retry, not an error).
 *
 * @module
 */
import type { MessageWrite } from '../record-store.js';

/** One write waiting for its statement. */
interface Waiting {
  write: MessageWrite;
  resolve: (applied: boolean) => void;
  reject: (error: unknown) => void;
}

/** Sends writes in statements of at most `maxBatch`, at most `maxInFlight` statements at once. */
export class WriteBatches {
  readonly #send: (writes: readonly MessageWrite[]) => Promise<Set<string>>;
  readonly #maxBatch: number;
  readonly #maxInFlight: number;
  #queue: Waiting[] = [];
  #inFlight = 0;
  #scheduled = false;

  /** `send` runs one statement of writes of distinct refs and resolves with the refs it applied. */
  constructor(send: (writes: readonly MessageWrite[]) => Promise<Set<string>>, maxBatch: number, maxInFlight: number) {
    this.#send = send;
    this.#maxBatch = maxBatch;
    this.#maxInFlight = maxInFlight;
  }

  /** Whether `write` was applied, once its statement is back. */
  write(write: MessageWrite): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => {
      this.#queue.push({ write, resolve, reject });
      if (!this.#scheduled && this.#inFlight < this.#maxInFlight) {
        this.#scheduled = true;
        // At the end of the turn: the writes made in it go together.
        setImmediate(() => {
          this.#scheduled = false;
          this.#dispatch();
        });
      }
    });
  }

  /** Sends what is queued while there is room. */
  #dispatch(): void {
    while (this.#queue.length > 0 && this.#inFlight < this.#maxInFlight) {
      const batch: Waiting[] = [];
      const rest: Waiting[] = [];
      const refs = new Set<string>();
      for (const waiting of this.#queue) {
        const ref = waiting.write.row.record.ref;
        if (batch.length < this.#maxBatch && !refs.has(ref)) {
          refs.add(ref);
          batch.push(waiting);
        } else rest.push(waiting);
      }
      this.#queue = rest;
      this.#inFlight += 1;
      void this.#run(batch).finally(() => {
        this.#inFlight -= 1;
        this.#dispatch();
      });
    }
  }

  /** Sends `batch`; when it fails, each of its writes alone. */
  async #run(batch: readonly Waiting[]): Promise<void> {
    const answer = (waiting: Waiting, applied: Set<string>) => waiting.resolve(applied.has(waiting.write.row.record.ref));
    try {
      const applied = await this.#send(batch.map((waiting) => waiting.write));
      for (const waiting of batch) answer(waiting, applied);
    } catch (error) {
      if (batch.length === 1) return batch[0]!.reject(error);
      await Promise.all(batch.map((waiting) => this.#send([waiting.write]).then((applied) => answer(waiting, applied), waiting.reject)));
    }
  }
}
