/**
 * The memory record store's submit queue ({@link SubmitQueue}): the rows a claim may take,
 * kept so that a claim of `k` rows costs O(k log n) however large the backlog is and however
 * many principals it spans.
 *
 * @module
 */
import type { ClaimOptions } from '../claim-options.js';
import type { MessageRow } from '../record-store.js';
import { IndexedHeap } from './indexed-heap.js';
import { IN, type Slot } from './slot.js';

/** Claim order within a class: the smaller `orderKey` first, then the earlier inserted. */
const claimFirst = (a: Slot, b: Slot): boolean => a.orderKey < b.orderKey || (a.orderKey === b.orderKey && a.seq < b.seq);
const earlierFirst = (a: Slot, b: Slot): boolean => a.laneAt < b.laneAt;
const laterFirst = (a: Slot, b: Slot): boolean => a.laneAt > b.laneAt;

/** When the row is due and under no lease: the earliest `now` a claim may take it at (validity aside). */
function readyAt(row: Slot | MessageRow): number {
  const leaseUntil = row.leaseUntil;
  return leaseUntil !== null && leaseUntil > row.dueAt ? leaseUntil : row.dueAt;
}

/** When the row's validity ends, or `null` when it has none. */
function validUntil(row: Slot | MessageRow): number | null {
  return row.record.validUntil ?? null;
}

/** Whether a write of `after` over the row `before` holds moves the row in the submit queue. */
export function movesInQueue(before: Slot, after: MessageRow): boolean {
  return (
    before.queue !== after.queue ||
    before.orderKey !== after.orderKey ||
    before.dueAt !== after.dueAt ||
    before.leaseUntil !== after.leaseUntil ||
    validUntil(before) !== validUntil(after)
  );
}

/**
 * The rows with `queue` not `null`, each in one of three heaps: its class's ready heap by
 * claim order (`orderKey`, `seq`), which a claim takes from; the waiting heap by when the
 * row is due and unleased (`max(dueAt, leaseUntil)`), for rows leased or not due; and the
 * lapsed heap, latest `validUntil` first, for rows whose validity ended. A claim at `now`
 * first moves to their ready heap the waiting rows ready by `now` and the lapsed rows still
 * valid at `now` (another instance's clock may lag), then pops its ready heaps in class
 * order: a popped row that is not claimable at `now` after all goes back to waiting or
 * lapsed. Every claimable row is in a ready heap when the claim pops, so the claim takes
 * exactly the first claimable rows by (`queue`, `orderKey`, `seq`), and a row moves between
 * heaps O(1) times per change of its row.
 */
export class SubmitQueue {
  /** Per class rank: the rows a claim may take. */
  readonly #ready = new Map<number, IndexedHeap<Slot>>();
  /** The class ranks that have a ready heap, ascending: the order claims take classes in. */
  #ranks: number[] = [];
  readonly #waiting = new IndexedHeap<Slot>(earlierFirst, IN.lane);
  readonly #lapsed = new IndexedHeap<Slot>(laterFirst, IN.lane);
  /** The latest `now` a claim or head was asked at: a row ready by then goes to its ready heap at once. */
  #latestNow = Number.NEGATIVE_INFINITY;

  /** Puts `slot` in the queue as its row stands (nowhere when `queue` is `null`); it must be out of it. */
  place(slot: Slot): void {
    if (slot.queue === null) return;
    const at = readyAt(slot);
    if (at > this.#latestNow) this.#wait(slot, at);
    else this.#makeReady(slot);
  }

  /** Takes `slot` out of the queue. */
  remove(slot: Slot): void {
    slot.lane?.remove(slot);
    slot.lane = null;
  }

  /**
   * Leases to `owner` the first `limit` rows claimable at `now` by (`queue`, `orderKey`,
   * `seq`): each slot's row gets `version` one higher, `leaseOwner` and `leaseUntil` set.
   * Returns the rows as stored after the claim.
   */
  claim(options: ClaimOptions): MessageRow[] {
    const { now, owner } = options;
    const limit = Math.max(0, options.limit);
    const claimed: MessageRow[] = [];
    if (limit === 0) return claimed;
    this.#wake(now);
    const leaseUntil = now + options.leaseMs;
    for (const rank of this.#ranks) {
      const ready = this.#ready.get(rank)!;
      while (claimed.length < limit) {
        const slot = ready.pop();
        if (slot === undefined) break;
        slot.lane = null;
        if (!this.#claimable(slot, now)) continue;
        slot.version++;
        slot.leaseOwner = owner;
        slot.leaseUntil = leaseUntil;
        // Not woken again before this claim ends, even with `leaseMs` 0: the wake ran already.
        this.#wait(slot, readyAt(slot));
        claimed.push(slot.row());
      }
      if (claimed.length === limit) break;
    }
    return claimed;
  }

  /** The smallest `orderKey` a claim at `now` could take in class `queue`, or `null` when none could. */
  head(queue: number, now: number): number | null {
    this.#wake(now);
    const ready = this.#ready.get(queue);
    if (ready === undefined) return null;
    for (let slot = ready.peek(); slot !== undefined; slot = ready.peek()) {
      if (readyAt(slot) <= now && !lapsed(slot, now)) return slot.orderKey;
      ready.pop();
      slot.lane = null;
      this.#claimable(slot, now);
    }
    return null;
  }

  /** Whether a claim at `now` may take `slot` (out of every heap); when it may not, sets it aside until it may. */
  #claimable(slot: Slot, now: number): boolean {
    const at = readyAt(slot);
    if (at > now) {
      this.#wait(slot, at);
      return false;
    }
    if (lapsed(slot, now)) {
      slot.laneAt = validUntil(slot)!;
      this.#lapsed.add(slot);
      slot.lane = this.#lapsed;
      return false;
    }
    return true;
  }

  /** Moves to their ready heaps the rows a claim at `now` may take that wait aside. */
  #wake(now: number): void {
    if (now > this.#latestNow) this.#latestNow = now;
    for (let top = this.#waiting.peek(); top !== undefined && top.laneAt <= now; top = this.#waiting.peek()) {
      this.#waiting.pop();
      this.#makeReady(top);
    }
    for (let top = this.#lapsed.peek(); top !== undefined && top.laneAt > now; top = this.#lapsed.peek()) {
      this.#lapsed.pop();
      this.#makeReady(top);
    }
  }

  /** Sets `slot` (out of every heap) aside until `at`. */
  #wait(slot: Slot, at: number): void {
    slot.laneAt = at;
    this.#waiting.add(slot);
    slot.lane = this.#waiting;
  }

  /** Puts `slot` (out of every heap) in its class's ready heap. */
  #makeReady(slot: Slot): void {
    const queue = slot.queue!;
    let ready = this.#ready.get(queue);
    if (ready === undefined) {
      this.#ready.set(queue, (ready = new IndexedHeap(claimFirst, IN.lane)));
      this.#ranks = [...this.#ranks, queue].sort((a, b) => a - b);
    }
    ready.add(slot);
    slot.lane = ready;
  }
}

/** Whether the validity of `slot`'s row has ended at `now`. */
function lapsed(slot: Slot, now: number): boolean {
  const until = validUntil(slot);
  return until !== null && until <= now;
}
