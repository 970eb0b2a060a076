/**
 * The memory record store's submit queue ({@link SubmitQueue}): the rows a claim may take,
 * kept so that a claim of `k` rows costs O(k log n) however large the backlog is and however
 * many principals it spans.
 *
 * @module
 */
import type { ClaimOptions } from '../claim-options.js';
import type { MessageRow } from '../record-store.js';
import { LazyHeap } from './lazy-heap.js';
import { NO_ENTRY, type Slot, type Stamps } from './slot.js';

/** A row's place in the submit queue, moved whole from heap to heap as the row waits. */
interface LaneEntry {
  slot: Slot;
  /** The slot's `lane` stamp when the entry was made: the entry stands for the row while they match. */
  readonly stamp: number;
  readonly queue: number;
  readonly orderKey: number;
  readonly seq: number;
  /** In the waiting heap, when the row may be claimed; in the lapsed heap, when its validity ended. */
  at: number;
}

const isCurrent = (entry: LaneEntry): boolean => entry.stamp === entry.slot.lane;
/** Claim order within a class: the smaller `orderKey` first, then the earlier inserted. */
const claimFirst = (a: LaneEntry, b: LaneEntry): boolean => a.orderKey < b.orderKey || (a.orderKey === b.orderKey && a.seq < b.seq);
const earlierFirst = (a: LaneEntry, b: LaneEntry): boolean => a.at < b.at;
const laterFirst = (a: LaneEntry, b: LaneEntry): boolean => a.at > b.at;

/** When `row` is due and under no lease: the earliest `now` a claim may take it at (validity aside). */
function readyAt(row: MessageRow): number {
  const leaseUntil = row.leaseUntil;
  return leaseUntil !== null && leaseUntil > row.dueAt ? leaseUntil : row.dueAt;
}

/** When `row`'s validity ends, or `null` when it has none. */
function validUntil(row: MessageRow): number | null {
  return row.record.validUntil ?? null;
}

/**
 * The rows with `queue` not `null`, each in one of three heaps: its class's ready heap by
 * claim order (`orderKey`, `seq`), where a claim takes from; the waiting heap by when it is
 * due and unleased (`max(dueAt, leaseUntil)`), for rows leased or not due; and the lapsed heap,
 * latest `validUntil` first, for rows whose validity ended. A claim at `now` first moves to
 * their ready heap the waiting rows ready by `now` and the lapsed rows still valid at `now`
 * (another instance's clock may lag), then pops its ready heaps in class order: a popped row
 * that is not claimable at `now` after all goes back to waiting or lapsed. Every claimable
 * row is in a ready heap when the claim pops, so the claim takes exactly the first
 * claimable rows by (`queue`, `orderKey`, `seq`), and a row is moved O(1) times per change.
 *
 * Entries are not removed when their row changes or leaves: the row takes a new stamp and
 * the old entry is skipped when it comes up ({@link LazyHeap}).
 */
export class SubmitQueue {
  /** Per class rank: the rows a claim may take. */
  readonly #ready = new Map<number, LazyHeap<LaneEntry>>();
  /** The class ranks that have a ready heap, ascending: the order claims take classes in. */
  #ranks: number[] = [];
  readonly #waiting = new LazyHeap<LaneEntry>(earlierFirst, isCurrent);
  readonly #lapsed = new LazyHeap<LaneEntry>(laterFirst, isCurrent);
  /** The latest `now` a claim or head was asked at: a row ready by then goes to its ready heap at once. */
  #latestNow = Number.NEGATIVE_INFINITY;

  constructor(private readonly stamps: Stamps) {}

  /** Puts `slot` in the queue as its row now stands (out of it when `queue` is `null`), dropping its previous place. */
  place(slot: Slot): void {
    this.remove(slot);
    const row = slot.row;
    if (row.queue === null) return;
    slot.lane = this.stamps.next();
    const entry: LaneEntry = { slot, stamp: slot.lane, queue: row.queue, orderKey: row.orderKey, seq: row.seq, at: 0 };
    const at = readyAt(row);
    if (at > this.#latestNow) this.#wait(entry, at);
    else this.#makeReady(entry);
  }

  /** Takes `slot` out of the queue: its entry goes stale. */
  remove(slot: Slot): void {
    if (slot.lane === NO_ENTRY) return;
    slot.lane = NO_ENTRY;
    slot.laneHeap?.forget();
    slot.laneHeap = null;
  }

  /**
   * Leases to `owner` the first `limit` rows claimable at `now` by (`queue`, `orderKey`,
   * `seq`): each slot gets a new row, `version` one higher, `leaseOwner` and `leaseUntil`
   * set. Returns the new rows.
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
        const entry = ready.pop();
        if (entry === undefined) break;
        const row = entry.slot.row;
        if (!this.#claimable(entry, row, now)) continue;
        const taken: MessageRow = { ...row, version: row.version + 1, leaseOwner: owner, leaseUntil };
        entry.slot.row = taken;
        // Not woken again before this claim ends, even with `leaseMs` 0: the wake ran already.
        this.#wait(entry, readyAt(taken));
        claimed.push(taken);
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
    for (let entry = ready.peek(); entry !== undefined; entry = ready.peek()) {
      if (this.#isClaimable(entry.slot.row, now)) return entry.orderKey;
      ready.pop();
      this.#claimable(entry, entry.slot.row, now);
    }
    return null;
  }

  /** Whether a claim at `now` may take `row`: due, under no live lease, still valid. */
  #isClaimable(row: MessageRow, now: number): boolean {
    const until = validUntil(row);
    return readyAt(row) <= now && (until === null || until > now);
  }

  /** Whether a claim at `now` may take `row` (popped as `entry`); when it may not, sets the entry aside until it may. */
  #claimable(entry: LaneEntry, row: MessageRow, now: number): boolean {
    const at = readyAt(row);
    if (at > now) {
      this.#wait(entry, at);
      return false;
    }
    const until = validUntil(row);
    if (until !== null && until <= now) {
      entry.at = until;
      this.#lapsed.push(entry);
      entry.slot.laneHeap = this.#lapsed;
      return false;
    }
    return true;
  }

  /** Moves to their ready heaps the rows a claim at `now` may take that wait aside. */
  #wake(now: number): void {
    if (now > this.#latestNow) this.#latestNow = now;
    for (let top = this.#waiting.peek(); top !== undefined && top.at <= now; top = this.#waiting.peek()) this.#makeReady(this.#waiting.pop()!);
    for (let top = this.#lapsed.peek(); top !== undefined && top.at > now; top = this.#lapsed.peek()) this.#makeReady(this.#lapsed.pop()!);
  }

  /** Sets `entry` aside until `at`. */
  #wait(entry: LaneEntry, at: number): void {
    entry.at = at;
    this.#waiting.push(entry);
    entry.slot.laneHeap = this.#waiting;
  }

  /** Puts `entry` in its class's ready heap. */
  #makeReady(entry: LaneEntry): void {
    let ready = this.#ready.get(entry.queue);
    if (ready === undefined) {
      this.#ready.set(entry.queue, (ready = new LazyHeap(claimFirst, isCurrent)));
      this.#ranks = [...this.#ranks, entry.queue].sort((a, b) => a - b);
    }
    ready.push(entry);
    entry.slot.laneHeap = ready;
  }
}
