/**
 * What the memory record store reads for `countQueued` and `queueEnds` ({@link QueueMembers}):
 * the rows in the submit queue by class, for everyone and per principal, by when they were
 * accepted and by `orderKey`, so that a count, the oldest, and the greatest `orderKey` cost
 * O(1) however large the backlog is, and a row joins or leaves in O(log n).
 *
 * @module
 */
import type { QueueCount } from '../contract.js';
import type { MessageRow } from '../record-store.js';
import { IndexedHeap } from './indexed-heap.js';
import { IN, type Slot } from './slot.js';

const olderFirst = (a: Slot, b: Slot): boolean => a.acceptedAt < b.acceptedAt;
const greaterKeyFirst = (a: Slot, b: Slot): boolean => a.orderKey > b.orderKey;

/** Rows of one class (everyone's, or one principal's): by acceptance, and by `orderKey`, greatest first. */
interface Group {
  byAge: IndexedHeap<Slot>;
  byKey: IndexedHeap<Slot>;
}

/** A class: everyone's rows, and each principal's. */
interface QueueClass extends Group {
  principals: Map<string, Group>;
}

/** The count of class `queue` in a {@link QueueCount}: 0 is `transactional`, any other `bulk`. */
const TRANSACTIONAL = 0;

/** When the row joined the queue, as `countQueued` reports it. */
function acceptedAt(row: Slot | MessageRow): number {
  return row.record.sendAt ?? row.record.createdAt;
}

/**
 * The rows in the submit queue, counted and ordered per class, for everyone and per
 * principal (see the module's TSDoc). Each queued slot is in four heaps: its class's and its
 * principal's, by acceptance and by `orderKey`; the slot's row says which.
 */
export class QueueMembers {
  readonly #classes = new Map<number, QueueClass>();

  /** Whether a write of `after` over the row `before` holds changes what a membership holds. */
  static changes(before: Slot, after: MessageRow): boolean {
    return (
      before.queue !== after.queue ||
      before.orderKey !== after.orderKey ||
      before.record.principalId !== after.record.principalId ||
      acceptedAt(before) !== acceptedAt(after)
    );
  }

  /** Counts `slot` as its row stands (not at all when `queue` is `null`); it must not be counted yet. */
  add(slot: Slot): void {
    if (slot.queue === null) return;
    slot.acceptedAt = acceptedAt(slot);
    const queueClass = this.#classOf(slot.queue);
    const principalId = slot.record.principalId;
    let own = queueClass.principals.get(principalId);
    if (own === undefined) queueClass.principals.set(principalId, (own = newGroup(IN.ownByAge, IN.ownByKey)));
    queueClass.byAge.add(slot);
    queueClass.byKey.add(slot);
    own.byAge.add(slot);
    own.byKey.add(slot);
  }

  /** Stops counting `slot` (its row is still the one it was added with). */
  remove(slot: Slot): void {
    if (slot.queue === null) return;
    const queueClass = this.#classes.get(slot.queue)!;
    const principalId = slot.record.principalId;
    const own = queueClass.principals.get(principalId)!;
    queueClass.byAge.remove(slot);
    queueClass.byKey.remove(slot);
    own.byAge.remove(slot);
    own.byKey.remove(slot);
    if (own.byAge.size === 0) queueClass.principals.delete(principalId);
  }

  /** The queued rows by class, and the oldest one's acceptance: everyone's, or those of `principalId`. */
  count(principalId?: string): QueueCount {
    const counted: QueueCount = { transactional: 0, bulk: 0, oldestAcceptedAt: null };
    for (const [queue, queueClass] of this.#classes) {
      const group = principalId === undefined ? queueClass : queueClass.principals.get(principalId);
      if (group === undefined) continue;
      if (queue === TRANSACTIONAL) counted.transactional += group.byAge.size;
      else counted.bulk += group.byAge.size;
      const oldest = group.byAge.peek()?.acceptedAt;
      if (oldest !== undefined && (counted.oldestAcceptedAt === null || oldest < counted.oldestAcceptedAt)) counted.oldestAcceptedAt = oldest;
    }
    return counted;
  }

  /** The greatest `orderKey` among the rows of `principalId` in class `queue`, or `null`. */
  principalLast(queue: number, principalId: string): number | null {
    return this.#classes.get(queue)?.principals.get(principalId)?.byKey.peek()?.orderKey ?? null;
  }

  /** The greatest `orderKey` in class `queue`, or `null` when it is empty. */
  greatest(queue: number): number | null {
    return this.#classes.get(queue)?.byKey.peek()?.orderKey ?? null;
  }

  #classOf(queue: number): QueueClass {
    let queueClass = this.#classes.get(queue);
    if (queueClass === undefined) this.#classes.set(queue, (queueClass = { ...newGroup(IN.classByAge, IN.classByKey), principals: new Map() }));
    return queueClass;
  }
}

/** An empty group whose heaps own the given `positions` slots. */
function newGroup(byAge: number, byKey: number): Group {
  return { byAge: new IndexedHeap(olderFirst, byAge), byKey: new IndexedHeap(greaterKeyFirst, byKey) };
}
