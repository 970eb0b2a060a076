/**
 * What the memory storage's `countQueued` reads ({@link AcceptedOrder}): the queued places of
 * one class, of everyone or of one principal, by acceptance time, so that their number and
 * the oldest one's `createdAt` cost O(1) however large the backlog is. Queued messages leave
 * out of order (fair claims interleave principals, retries wait, a `finish` ends any of
 * them), and `createdAt` is the caller's clock, not insertion order, so the oldest cannot be
 * read off either end of a list: each place knows its position in the heaps it is in, and
 * leaves them in O(log n) without leaving a stale entry behind.
 *
 * @module
 */
import type { Place } from './records.js';

/**
 * An indexed binary min-heap of queued places by `acceptedAt`: the oldest in O(1), adding
 * and removing any place in O(log n) (adding is O(1) in the usual case, a place accepted no
 * earlier than the others). A place is in at most two of them, its class's for everyone
 * (`own` false) and its principal's backlog's in that class (`own` true), and keeps its
 * position in each (`Place.inAll`, `Place.inOwn`; -1 when out).
 */
export class AcceptedOrder {
  readonly #items: Place[] = [];

  /** `own`: the heap of one principal's backlog (positions in `Place.inOwn`), else of a whole class (`Place.inAll`). */
  constructor(private readonly own: boolean) {}

  /** How many places it holds: the queued messages it counts. */
  get size(): number {
    return this.#items.length;
  }

  /** When the oldest place's message was accepted, or `null` when it holds none. */
  oldest(): number | null {
    const top = this.#items[0];
    return top === undefined ? null : top.acceptedAt;
  }

  /** Adds `place` (not in it yet). */
  add(place: Place): void {
    this.#up(place, this.#items.push(place) - 1);
  }

  /** Removes `place`, if it is in it. */
  remove(place: Place): void {
    const at = this.own ? place.inOwn : place.inAll;
    const items = this.#items;
    if (at < 0 || items[at] !== place) return;
    this.#place(place, -1);
    const last = items.pop()!;
    if (at === items.length) return;
    // The last place fills the hole, then moves up or down to where it belongs.
    if (at > 0 && last.acceptedAt < items[(at - 1) >> 1]!.acceptedAt) this.#up(last, at);
    else this.#down(last, at);
  }

  /** Puts `place` at `at` or above, moving older parents down. */
  #up(place: Place, at: number): void {
    const items = this.#items;
    while (at > 0) {
      const parent = (at - 1) >> 1;
      const above = items[parent]!;
      if (above.acceptedAt <= place.acceptedAt) break;
      this.#put(above, at);
      at = parent;
    }
    this.#put(place, at);
  }

  /** Puts `place` at `at` or below, moving older children up. */
  #down(place: Place, at: number): void {
    const items = this.#items;
    for (;;) {
      let child = 2 * at + 1;
      if (child >= items.length) break;
      if (child + 1 < items.length && items[child + 1]!.acceptedAt < items[child]!.acceptedAt) child++;
      const below = items[child]!;
      if (below.acceptedAt >= place.acceptedAt) break;
      this.#put(below, at);
      at = child;
    }
    this.#put(place, at);
  }

  #put(place: Place, at: number): void {
    this.#items[at] = place;
    this.#place(place, at);
  }

  #place(place: Place, at: number): void {
    if (this.own) place.inOwn = at;
    else place.inAll = at;
  }
}
