/**
 * Where messages joining the submit queue go in the fair order: their `orderKey`, a virtual
 * finish tag (`fairTags`, lifecycle/fair-tags.ts) after the later of their principal's last
 * queued tag in the class and the class's head, both read from the store with one
 * `queueEnds` per (principal, class) however many messages join.
 *
 * The read and the insert that follows it are two steps, so two requests of one principal
 * accepted at once would both read the same last tag and interleave their messages, serving
 * that principal twice in a turn. {@link RecentTags} closes that within one process: each
 * placement starts after the last tag this ledger gave the principal in the class, whether
 * or not its insert is visible yet. Across instances sharing a store the order stays
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
 * The last tag this process gave each principal in each class, so that placements that
 * overlap in time still follow one another. Bounded: forgetting an entry only loses that
 * guarantee for a request that overlaps the one that set it.
 */
export class RecentTags {
  static readonly #LIMIT = 10_000;
  readonly #last = new Map<string, number>();

  /** The later of `fromStore` and the last tag given here to `principalId` in class `rank`. */
  after(rank: number, principalId: string, fromStore: number | null): number | null {
    const recent = this.#last.get(`${rank}:${principalId}`);
    return recent === undefined || (fromStore !== null && fromStore >= recent) ? fromStore : recent;
  }

  /** Records `tag` as the last given to `principalId` in class `rank`. */
  gave(rank: number, principalId: string, tag: number): void {
    if (this.#last.size >= RecentTags.#LIMIT) this.#last.clear();
    this.#last.set(`${rank}:${principalId}`, tag);
  }
}

/**
 * The order keys of `joining`, in order, as they join at `now` (one request's messages in
 * acceptance order, or scheduled messages come due): each run of one principal's messages
 * of one class and weight is spaced after the principal's last tag (its earlier runs here
 * included) or after the class's head as it was before any of them joined.
 */
export async function fairPlaces(store: RecordStore, recent: RecentTags, joining: readonly Joining[], now: number): Promise<number[]> {
  const only = joining[0];
  if (only !== undefined && isOneRun(joining)) {
    // One principal's messages of one class and weight, as most requests are.
    const ends = await store.queueEnds(only.rank, only.principalId, now);
    const tags = fairTags(joining.length, only.weight, recent.after(only.rank, only.principalId, ends.principalLast), ends.head);
    recent.gave(only.rank, only.principalId, tags[tags.length - 1]!);
    return tags;
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
      last = recent.after(first.rank, first.principalId, ends.principalLast);
      if (heads[first.rank] === undefined) heads[first.rank] = ends.head;
    }
    const tags = fairTags(to - from, first.weight, last, heads[first.rank] ?? null);
    for (let i = from; i < to; i++) keys[i] = tags[i - from]!;
    lasts.set(owner, tags[tags.length - 1]!);
    recent.gave(first.rank, first.principalId, tags[tags.length - 1]!);
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
