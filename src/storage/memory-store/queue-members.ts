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
import { IndexedHeap, type Positioned } from './indexed-heap.js';
import type { Slot } from './slot.js';

/** A row's membership of its class's heaps while it is in the submit queue; it sits in four of them. */
export interface Member extends Positioned {
  readonly principalId: string;
  readonly queue: number;
  readonly orderKey: number;
  /** `record.sendAt ?? record.createdAt`: what the oldest queued row is told by. */
  readonly acceptedAt: number;
}

/** The `positions` slots of a member's four heaps. */
const ALL_BY_AGE = 0;
const OWN_BY_AGE = 1;
const ALL_BY_KEY = 2;
const OWN_BY_KEY = 3;

const olderFirst = (a: Member, b: Member): boolean => a.acceptedAt < b.acceptedAt;
const greaterKeyFirst = (a: Member, b: Member): boolean => a.orderKey > b.orderKey;

/** Rows of one class (everyone's, or one principal's): by acceptance, and by `orderKey`, greatest first. */
interface Group {
  byAge: IndexedHeap<Member>;
  byKey: IndexedHeap<Member>;
}

/** A class: everyone's rows, and each principal's. */
interface QueueClass extends Group {
  principals: Map<string, Group>;
}

/** The count of class `queue` in a {@link QueueCount}: 0 is `transactional`, any other `bulk`. */
const TRANSACTIONAL = 0;

/** When `row` joined the queue, as `countQueued` reports it. */
function acceptedAt(row: MessageRow): number {
  return row.record.sendAt ?? row.record.createdAt;
}

/**
 * The rows in the submit queue, counted and ordered per class, for everyone and per
 * principal (see the module's TSDoc). A slot's membership is kept on the slot.
 */
export class QueueMembers {
  readonly #classes = new Map<number, QueueClass>();

  /** Whether a write from `before` to `after` changes what a membership holds. */
  static changes(before: MessageRow, after: MessageRow): boolean {
    return (
      before.queue !== after.queue ||
      before.orderKey !== after.orderKey ||
      before.record.principalId !== after.record.principalId ||
      acceptedAt(before) !== acceptedAt(after)
    );
  }

  /** Counts `slot` as its row now stands (not at all when `queue` is `null`); it must hold no membership. */
  add(slot: Slot): void {
    const row = slot.row;
    if (row.queue === null) return;
    const member: Member = {
      principalId: row.record.principalId,
      queue: row.queue,
      orderKey: row.orderKey,
      acceptedAt: acceptedAt(row),
      positions: [-1, -1, -1, -1],
    };
    const queueClass = this.#classOf(row.queue);
    let own = queueClass.principals.get(member.principalId);
    if (own === undefined) queueClass.principals.set(member.principalId, (own = newGroup(OWN_BY_AGE, OWN_BY_KEY)));
    queueClass.byAge.add(member);
    queueClass.byKey.add(member);
    own.byAge.add(member);
    own.byKey.add(member);
    slot.member = member;
  }

  /** Stops counting `slot`. */
  remove(slot: Slot): void {
    const member = slot.member;
    if (member === null) return;
    slot.member = null;
    const queueClass = this.#classes.get(member.queue)!;
    const own = queueClass.principals.get(member.principalId)!;
    queueClass.byAge.remove(member);
    queueClass.byKey.remove(member);
    own.byAge.remove(member);
    own.byKey.remove(member);
    if (own.byAge.size === 0) queueClass.principals.delete(member.principalId);
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
    if (queueClass === undefined) this.#classes.set(queue, (queueClass = { ...newGroup(ALL_BY_AGE, ALL_BY_KEY), principals: new Map() }));
    return queueClass;
  }
}

/** An empty group whose heaps own the given `positions` slots. */
function newGroup(byAge: number, byKey: number): Group {
  return { byAge: new IndexedHeap(olderFirst, byAge), byKey: new IndexedHeap(greaterKeyFirst, byKey) };
}
