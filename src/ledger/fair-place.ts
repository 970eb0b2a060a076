/**
 * Where messages joining the submit queue go in the fair order: their `orderKey`, a virtual
 * finish tag (`fairTags`, lifecycle/fair-tags.ts) after the later of their principal's last
 * queued tag in the class and the class's head, both read from the store with one
 * `queueEnds` per (principal, class) however many messages join.
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
 * The order keys of `joining`, in order, as they join at `now` (one request's messages in
 * acceptance order, or scheduled messages come due): each run of one principal's messages
 * of one class and weight is spaced after the principal's last tag (its earlier runs here
 * included) or after the class's head as it was before any of them joined.
 */
export async function fairPlaces(store: RecordStore, joining: readonly Joining[], now: number): Promise<number[]> {
  const only = joining[0];
  if (only !== undefined && isOneRun(joining)) {
    // One principal's messages of one class and weight, as most requests are.
    const ends = await store.queueEnds(only.rank, only.principalId, now);
    return fairTags(joining.length, only.weight, ends.principalLast, ends.head);
  }
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
      last = ends.principalLast;
      if (heads[first.rank] === undefined) heads[first.rank] = ends.head;
    }
    const tags = fairTags(to - from, first.weight, last, heads[first.rank] ?? null);
    for (let i = from; i < to; i++) keys[i] = tags[i - from]!;
    lasts.set(owner, tags[tags.length - 1]!);
    from = to;
  }
  return keys;
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
