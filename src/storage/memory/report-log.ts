/**
 * The memory record store's report log ({@link ReportLog}): each principal's ended messages
 * by the report key the write that ended them gave them, so that a read from a key is a
 * binary search and a deleted message leaves the log with its row.
 *
 * @module
 */
import type { ReportedRow } from '../record-store.js';
import { SlotGroups, type Place } from './sorted-slots.js';

/** Where `slot` is against key `after` (see {@link Place}): before it when its key is not above it. */
const afterKey: Place<number | null> = (slot, after) => (after !== null && slot.reportKey! <= after ? -1 : 1);

/** The slots that have a report key, by principal, in key order. */
export class ReportLog extends SlotGroups<string> {
  constructor() {
    super({
      order: (a, b) => a.reportKey! - b.reportKey!,
      key: (slot) => (slot.reportKey === null ? null : slot.record.principalId),
      moves: (slot, after) => slot.record.principalId !== after.record.principalId,
    });
  }

  /** The principal's messages with a key above `after`, in key order, at most `limit`. */
  read(principalId: string, after: number | null, limit: number): ReportedRow[] {
    const found: ReportedRow[] = [];
    for (const slot of this.get(principalId)?.from(afterKey, after) ?? []) {
      if (found.length >= limit) break;
      found.push({ seq: slot.reportKey!, row: slot.row() });
    }
    return found;
  }
}
