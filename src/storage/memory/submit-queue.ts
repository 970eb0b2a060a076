/**
 * The memory record store's submit queue ({@link SubmitQueue}): the rows a claim may take,
 * kept so that a claim of `k` rows costs O(k log n) however large the backlog is and however
 * many principals it spans.
 *
 * @module
 */
import type { ClaimOptions } from '../claim-options.js';
import type { MessageRow } from '../record-store.js';
import type { Slot } from './slot.js';
import { SortedSlots, type SlotIndex } from './sorted-slots.js';

/** Claim order within a class (and queue-members.ts's order by key): the smaller `orderKey` first, then the earlier inserted. */
export const byOrderKey = (a: Slot, b: Slot): number => a.orderKey - b.orderKey || a.seq - b.seq;
const earlierFirst = (a: Slot, b: Slot): number => a.laneAt - b.laneAt || a.seq - b.seq;
const laterFirst = (a: Slot, b: Slot): number => b.laneAt - a.laneAt || a.seq - b.seq;

/** When the row is due and under no lease: the earliest `now` a claim may take it at (validity aside). */
function readyAt(row: Slot | MessageRow): number {
  const leaseUntil = row.leaseUntil;
  return leaseUntil !== null && leaseUntil > row.dueAt ? leaseUntil : row.dueAt;
}

/**
 * The rows with `queue` not `null`, each in one of three lists: its class's ready list by
 * claim order (`orderKey`, `seq`), which a claim takes from; the waiting list by when the
 * row is due and unleased (`max(dueAt, leaseUntil)`), for rows leased or not due; and the
 * lapsed list, latest `validUntil` first, for rows whose validity ended. A claim at `now`
 * first moves to their ready list the waiting rows ready by `now` and the lapsed rows still
 * valid at `now` (another instance's clock may lag), then takes from its ready lists in
 * class order: a row taken that is not claimable at `now` after all goes back to waiting or
 * lapsed. Every claimable row is in a ready list when the claim takes, so the claim takes
 * exactly the first claimable rows by (`queue`, `orderKey`, `seq`), and a row moves between
 * lists O(1) times per change of its row.
 */
export class SubmitQueue implements SlotIndex {
  /** Per class rank: the rows a claim may take. */
  readonly #ready = new Map<number, SortedSlots>();
  /** The class ranks that have a ready list, ascending: the order claims take classes in. */
  #ranks: number[] = [];
  readonly #waiting = new SortedSlots(earlierFirst);
  readonly #lapsed = new SortedSlots(laterFirst);
  /** The latest `now` a claim or head was asked at: a row ready by then goes to its ready list at once. */
  #latestNow = Number.NEGATIVE_INFINITY;

  moves(slot: Slot, after: MessageRow): boolean {
    return (
      slot.queue !== after.queue ||
      slot.orderKey !== after.orderKey ||
      slot.dueAt !== after.dueAt ||
      slot.leaseUntil !== after.leaseUntil ||
      (slot.record.validUntil ?? null) !== (after.record.validUntil ?? null)
    );
  }

  add(slot: Slot): void {
    if (slot.queue === null) return;
    const at = readyAt(slot);
    if (at > this.#latestNow) this.#put(this.#waiting, slot, at);
    else this.#makeReady(slot);
  }

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
      for (let slot = ready.first(); slot !== undefined && claimed.length < limit; slot = ready.first()) {
        if (!this.#claimable(slot, now)) continue;
        this.remove(slot);
        slot.version++;
        slot.leaseOwner = owner;
        slot.leaseUntil = leaseUntil;
        // Not woken again before this claim ends, even with `leaseMs` 0: the wake ran already.
        this.#put(this.#waiting, slot, readyAt(slot));
        claimed.push(slot.row());
      }
    }
    return claimed;
  }

  /** The smallest `orderKey` a claim at `now` could take in class `queue`, or `null` when none could. */
  head(queue: number, now: number): number | null {
    this.#wake(now);
    const ready = this.#ready.get(queue);
    for (let slot = ready?.first(); slot !== undefined; slot = ready!.first()) if (this.#claimable(slot, now)) return slot.orderKey;
    return null;
  }

  /** Whether a claim at `now` may take `slot`, which is ready; when it may not, sets it aside until it may. */
  #claimable(slot: Slot, now: number): boolean {
    const at = readyAt(slot);
    const until = slot.record.validUntil ?? null;
    if (at <= now && (until === null || until > now)) return true;
    this.remove(slot);
    if (at > now) this.#put(this.#waiting, slot, at);
    else this.#put(this.#lapsed, slot, until!);
    return false;
  }

  /** Moves to their ready lists the rows a claim at `now` may take that wait aside. */
  #wake(now: number): void {
    if (now > this.#latestNow) this.#latestNow = now;
    for (let top = this.#waiting.first(); top !== undefined && top.laneAt <= now; top = this.#waiting.first()) this.#makeReady(top);
    for (let top = this.#lapsed.first(); top !== undefined && top.laneAt > now; top = this.#lapsed.first()) this.#makeReady(top);
  }

  /** Puts `slot` in its class's ready list (out of the list it is in). */
  #makeReady(slot: Slot): void {
    this.remove(slot);
    const queue = slot.queue!;
    let ready = this.#ready.get(queue);
    if (ready === undefined) {
      this.#ready.set(queue, (ready = new SortedSlots(byOrderKey)));
      this.#ranks = [...this.#ranks, queue].sort((a, b) => a - b);
    }
    this.#put(ready, slot, slot.laneAt);
  }

  /** Puts `slot` (out of every list) in `lane`, at `laneAt` when the lane is ordered by it. */
  #put(lane: SortedSlots, slot: Slot, laneAt: number): void {
    slot.laneAt = laneAt;
    lane.add(slot);
    slot.lane = lane;
  }
}
