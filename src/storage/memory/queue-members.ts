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
import { acceptedAt, type Slot } from './slot.js';
import { SlotGroups, type SlotOrder } from './sorted-slots.js';
import { byOrderKey } from './submit-queue.js';

/** The count of class `queue` in a {@link QueueCount}: 0 is `transactional`, any other `bulk`. */
const TRANSACTIONAL = 0;

const olderFirst: SlotOrder = (a, b) => a.acceptedAt - b.acceptedAt || a.seq - b.seq;

/** Whether a write of `after` over the row `slot` holds moves it in the members' lists. */
function moves(slot: Slot, after: MessageRow): boolean {
  return (
    slot.queue !== after.queue ||
    slot.orderKey !== after.orderKey ||
    slot.record.principalId !== after.record.principalId ||
    slot.acceptedAt !== acceptedAt(after)
  );
}

/** The queued rows in `order`: by class (`principal` false), or by class and principal. */
function members(order: SlotOrder, principal: boolean): SlotGroups<number> {
  return new SlotGroups({ order, key: (slot) => slot.queue, subKey: principal ? (slot) => slot.record.principalId : undefined, moves });
}

/**
 * The rows in the submit queue, counted and ordered per class, for everyone and per
 * principal (see the module's TSDoc): by class, and by class and principal, each by
 * acceptance and by `orderKey` (new rows mostly at the end); the store keeps the four up.
 */
export class QueueMembers {
  readonly #classByAge = members(olderFirst, false);
  readonly #ownByAge = members(olderFirst, true);
  readonly #classByKey = members(byOrderKey, false);
  readonly #ownByKey = members(byOrderKey, true);
  /** The lists, for the store to keep up. */
  readonly indexes = [this.#classByAge, this.#ownByAge, this.#classByKey, this.#ownByKey];

  /** The queued rows by class, and the oldest one's acceptance: everyone's, or those of `principalId`. */
  count(principalId?: string): QueueCount {
    const counted: QueueCount = { transactional: 0, bulk: 0, oldestAcceptedAt: null };
    for (const queue of this.#classByAge.keys()) {
      const group = principalId === undefined ? this.#classByAge.get(queue) : this.#ownByAge.get(queue, principalId);
      if (group === undefined) continue;
      if (queue === TRANSACTIONAL) counted.transactional += group.size;
      else counted.bulk += group.size;
      const oldest = group.first()!.acceptedAt;
      if (counted.oldestAcceptedAt === null || oldest < counted.oldestAcceptedAt) counted.oldestAcceptedAt = oldest;
    }
    return counted;
  }

  /** The greatest `orderKey` among the rows of `principalId` in class `queue`, or `null`. */
  principalLast(queue: number, principalId: string): number | null {
    return this.#ownByKey.get(queue, principalId)?.last()?.orderKey ?? null;
  }

  /** The greatest `orderKey` in class `queue`, or `null` when it is empty. */
  greatest(queue: number): number | null {
    return this.#classByKey.get(queue)?.last()?.orderKey ?? null;
  }
}
