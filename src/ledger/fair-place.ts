/**
 * Where messages joining the submit queue go in the fair order: their `orderKey`, a virtual
 * finish tag (`fairTags`, lifecycle/fair-tags.ts) after the later of their principal's last
 * queued tag in the class and the class's head, both read from the store with one
 * `queueEnds` per (principal, class) however many messages join.
 *
 * The read and the insert that follows it are two steps, so two requests of one principal
 * accepted at once would both read the same last tag and interleave their messages, serving
 * that principal twice in a turn. {@link RecentTags} closes that within one process: a
 * placement starts after the last tag of the principal's placements still in flight here. Across instances sharing a store the order stays
 * approximate, as the storage contract says.
 *
 * @module
 */
import { fairTags } from '../lifecycle/fair-tags.js';
import type { RecordStore } from '../storage/record-store.js';

/** One message joining the submit queue: whose, in which class (rank), at what weight. */
export interface Joining {
  /** Whose message it is. */
  principalId: string;
  /** Its class's rank in the submit queue (`PRIORITY_RANK`). */
  rank: number;
  /** Its principal's weight, a positive number: its tags are spaced `1 / weight` apart. */
  weight: number;
}

/**
 * The tags of placements whose insert is still in flight in this process, the last one per
 * principal and class, so that placements that overlap in time still follow one another.
 * An entry lives only until its insert is done: from then on the store's own
 * `principalLast` says the same, and a principal whose messages have left the queue starts
 * from the head again.
 */
export class RecentTags {
  readonly #inFlight = new Map<string, { tag: number; holds: number }>();

  /** The later of `fromStore` and the last tag of an in-flight placement of `principalId` in class `rank`. */
  after(rank: number, principalId: string, fromStore: number | null): number | null {
    const held = this.#inFlight.get(`${rank}:${principalId}`);
    return held === undefined || (fromStore !== null && fromStore >= held.tag) ? fromStore : held.tag;
  }

  /** Holds `tag` as `principalId`'s last in class `rank` until the returned release is called. */
  hold(rank: number, principalId: string, tag: number): () => void {
    const key = `${rank}:${principalId}`;
    const held = this.#inFlight.get(key);
    if (held === undefined) this.#inFlight.set(key, { tag, holds: 1 });
    else {
      held.tag = Math.max(held.tag, tag);
      held.holds++;
    }
    return () => {
      const entry = this.#inFlight.get(key);
      if (entry !== undefined && --entry.holds === 0) this.#inFlight.delete(key);
    };
  }
}

/** Order keys, with the release of their in-flight hold, to call once their write is done. */
export interface Placed {
  keys: number[];
  release: () => void;
}

/**
 * The order keys of `joining`, in order, as they join at `now` (one request's messages in
 * acceptance order, or scheduled messages come due): each run of one principal's messages
 * of one class and weight is spaced after the principal's last tag (its earlier runs here
 * included) or after the class's head as it was before any of them joined.
 */
export async function fairPlaces(store: RecordStore, recent: RecentTags, joining: readonly Joining[], now: number): Promise<Placed> {
  const only = joining[0];
  if (only !== undefined && isOneRun(joining)) {
    // One principal's messages of one class and weight, as most requests are.
    const ends = await store.queueEnds(only.rank, only.principalId, now);
    const keys = fairTags(joining.length, only.weight, recent.after(only.rank, only.principalId, ends.principalLast), ends.head);
    return { keys, release: recent.hold(only.rank, only.principalId, keys[keys.length - 1]!) };
  }
  const releases: (() => void)[] = [];
  const keys = new Array<number>(joining.length);
  const heads: (number | null | undefined)[] = [];
  const lasts = new Map<string, number | null>();
  for (let from = 0; from < joining.length; ) {
    const first = joining[from]!;
    let to = from + 1;
    while (to < joining.length && joining[to]!.principalId === first.principalId && joining[to]!.rank === first.rank && joining[to]!.weight === first.weight) to++;
    // Principal ids are any text: the rank first, then a separator a rank never holds.
    const owner = `${first.rank}:${first.principalId}`;
    let last = lasts.get(owner);
    if (last === undefined) {
      const ends = await store.queueEnds(first.rank, first.principalId, now);
      last = recent.after(first.rank, first.principalId, ends.principalLast);
      if (heads[first.rank] === undefined) heads[first.rank] = ends.head;
    }
    const tags = fairTags(to - from, first.weight, last, heads[first.rank] ?? null);
    for (let i = from; i < to; i++) keys[i] = tags[i - from]!;
    lasts.set(owner, tags[tags.length - 1]!);
    releases.push(recent.hold(first.rank, first.principalId, tags[tags.length - 1]!));
    from = to;
  }
  return { keys, release: () => releases.forEach((release) => release()) };
}

/** Whether every one of `joining` is of the first's principal, class and weight. */
function isOneRun(joining: readonly Joining[]): boolean {
  const first = joining[0]!;
  for (let i = 1; i < joining.length; i++) {
    const next = joining[i]!;
    if (next.principalId !== first.principalId || next.rank !== first.rank || next.weight !== first.weight) return false;
  }
  return true;
}
