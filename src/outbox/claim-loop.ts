/**
 * The claim loop: the one mechanism by which this instance takes work from storage, shared
 * by the submit worker (queued messages) and the delivery report dispatcher (due reports).
 *
 * It owns what both need and nothing of what either does with an item: the bound on items
 * held at once, coalesced wakes, the poll timer, the backlog flag that lets finished work
 * claim more, room reserved for items about to be handed over without a claim, and stopping
 * (no claim after `stop()`, every held item awaited by `drain()`).
 *
 * An item is held from its claim (or hand-over) until the promise its runner returned
 * settles; a runner that cannot take an item returns `undefined`, and the loop gives such
 * items back together through `onRefused`.
 */

/** How a {@link ClaimLoop} claims and runs its items. */
export interface ClaimLoopOptions<T> {
  /** The most items held at once (claimed or handed over, not yet done). */
  capacity: number;
  /** How long the loop sleeps between polls when nothing woke it, ms. */
  pollIntervalMs: number;
  /** The most items one claim asks for; default {@link ClaimLoopOptions.capacity}. */
  batchSize?: number;
  /**
   * The claims one poll makes at most while each comes back full, so a long backlog cannot
   * keep a poll busy for long; default 16.
   */
  maxClaimsPerPoll?: number;
  /**
   * The free room at which finished work claims more when the last claim was full; default 1.
   * Claiming one item at a time costs a claim (a storage write) per item, so a loop whose
   * claims are dear waits for a batch's worth of room.
   */
  refillAt?: number;
  /** Takes up to `limit` items from storage, leased to this instance from `now`. */
  claim(limit: number, now: number): Promise<readonly T[]>;
  /**
   * Starts work on one item claimed at `claimedAt`; the returned promise settles when the
   * item is no longer held. `undefined` when the runner cannot take it now.
   */
  run(item: T, claimedAt: number): Promise<void> | undefined;
  /** Gives back the items of one claim that {@link ClaimLoopOptions.run} did not take. */
  onRefused?(items: readonly T[], claimedAt: number): Promise<void>;
  /** A claim or a give-back failed; the loop goes on at the next poll. */
  onError(error: unknown): void;
  /** The clock, epoch ms. */
  now: () => number;
}

/** Claims work from storage in a loop and runs it, within a bound on the items held. */
export class ClaimLoop<T> {
  readonly #options: ClaimLoopOptions<T>;
  readonly #batchSize: number;
  readonly #maxClaimsPerPoll: number;
  readonly #refillAt: number;
  /** The items held: claimed or handed over, until their work settles. */
  readonly #held = new Set<Promise<void>>();
  /** Room promised to items about to be handed over ({@link ClaimLoop.reserve}). */
  #reserved = 0;
  #timer: NodeJS.Timeout | undefined;
  #polling: Promise<void> | null = null;
  #wakeScheduled = false;
  /** A wake came while a poll was under way: that poll claims once more. */
  #wokenWhilePolling = false;
  /** The last claim came back full: more may be waiting for room. */
  #backlog = false;
  #started = false;
  #stopped = false;

  constructor(options: ClaimLoopOptions<T>) {
    this.#options = options;
    this.#batchSize = options.batchSize ?? options.capacity;
    this.#maxClaimsPerPoll = options.maxClaimsPerPoll ?? 16;
    this.#refillAt = options.refillAt ?? 1;
  }

  /** True between {@link ClaimLoop.start} and {@link ClaimLoop.stop}. */
  get running(): boolean {
    return this.#started && !this.#stopped;
  }

  /** How many more items may be held now. */
  room(): number {
    return this.#options.capacity - this.#held.size - this.#reserved;
  }

  /** Starts polling at once, then every `pollIntervalMs` (the timer does not keep the process alive). */
  start(): void {
    if (this.#started || this.#stopped) return;
    this.#started = true;
    void this.#poll();
  }

  /**
   * Polls soon: work has just become due. Cheap to call often: the wakes of one turn of the
   * event loop make one poll, and while less than `refillAt` room is free the poll is left
   * to the work that frees it.
   */
  wake(): void {
    if (!this.running) return;
    if (this.#polling !== null) {
      this.#wokenWhilePolling = true;
      return;
    }
    if (this.#wakeScheduled) return;
    this.#wakeScheduled = true;
    setImmediate(() => {
      this.#wakeScheduled = false;
      if (this.room() < this.#refillAt) this.#backlog = true;
      else void this.#poll();
    });
  }

  /**
   * Takes room for `count` items about to be handed over ({@link ClaimLoop.hold}) without a
   * claim; false (nothing taken) when the loop is not running or has not that much room,
   * counting `overdraft` items past the capacity as room.
   */
  reserve(count: number, overdraft = 0): boolean {
    if (!this.running || this.room() + overdraft < count) return false;
    this.#reserved += count;
    return true;
  }

  /** Gives back room taken by {@link ClaimLoop.reserve}: the items were handed over, or never came. */
  release(count: number): void {
    this.#reserved -= count;
  }

  /**
   * Holds work that came without a claim until it settles: {@link ClaimLoop.drain} waits for
   * it, and it counts against the room.
   */
  hold(work: Promise<void>): void {
    this.#held.add(work);
    void work.finally(() => {
      this.#held.delete(work);
      if (this.#backlog && this.running && this.room() >= this.#refillAt) this.wake();
    });
  }

  /** Claims no more and waits for a claim under way; its items are run (or refused) first. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#polling;
  }

  /** Waits until every held item has settled, those held while it waits included. */
  async drain(): Promise<void> {
    while (this.#held.size > 0) await Promise.allSettled([...this.#held]);
  }

  #schedule(delay: number): void {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => void this.#poll(), delay);
    this.#timer.unref();
  }

  #poll(): Promise<void> {
    if (this.#stopped) return Promise.resolve();
    if (this.#polling !== null) {
      this.#wokenWhilePolling = true;
      return this.#polling;
    }
    clearTimeout(this.#timer);
    this.#polling = this.#claimRounds().finally(() => {
      this.#polling = null;
      if (!this.#stopped) this.#schedule(this.#options.pollIntervalMs);
    });
    return this.#polling;
  }

  /** Claims while claims come back full (or wakes arrive) and there is room, up to `maxClaimsPerPoll`. */
  async #claimRounds(): Promise<void> {
    const options = this.#options;
    try {
      for (let round = 0; round < this.#maxClaimsPerPoll && !this.#stopped; round++) {
        this.#wokenWhilePolling = false;
        const room = this.room();
        if (room <= 0) {
          this.#backlog = true;
          return;
        }
        const limit = Math.min(this.#batchSize, room);
        const claimedAt = options.now();
        const items = await options.claim(limit, claimedAt);
        this.#backlog = items.length >= limit;
        const refused: T[] = [];
        for (const item of items) {
          const work = options.run(item, claimedAt);
          if (work === undefined) refused.push(item);
          else this.hold(work);
        }
        if (refused.length > 0) await options.onRefused?.(refused, claimedAt);
        if (!this.#backlog && !this.#wokenWhilePolling) return;
      }
    } catch (error) {
      options.onError(error);
    }
  }
}
