/**
 * The memory record store's report log: each principal's ended messages in the order they
 * ended, each with the store's next key; a read from a key is a binary search. A message
 * deleted from the store leaves its entry behind, skipped by reads and dropped once a
 * principal's list is mostly such entries (retention deletes the oldest first).
 *
 * @module
 */
import type { ReportedRow } from '../record-store.js';
import type { Slot } from './slot.js';

/** A logged message: its key and its slot. */
interface Entry {
  seq: number;
  slot: Slot;
}

/** A principal's entries in key order, and how many of them name a deleted message. */
interface PrincipalLog {
  entries: Entry[];
  deleted: number;
}

/** Every principal's logged messages, by principal, in key order. */
export class MemoryReportLog {
  readonly #byPrincipal = new Map<string, PrincipalLog>();
  readonly #isStored: (slot: Slot) => boolean;
  #seq = 0;

  /** `isStored` tells whether a slot is still the store's (not deleted). */
  constructor(isStored: (slot: Slot) => boolean) {
    this.#isStored = isStored;
  }

  /** Appends `slot`'s message, which has just ended, with the next key. */
  append(principalId: string, slot: Slot): void {
    let log = this.#byPrincipal.get(principalId);
    if (log === undefined) this.#byPrincipal.set(principalId, (log = { entries: [], deleted: 0 }));
    log.entries.push({ seq: ++this.#seq, slot });
  }

  /** Notes that a message of `principalId` was deleted: its entry, if it has one, is skipped from now on. */
  deleted(principalId: string): void {
    const log = this.#byPrincipal.get(principalId);
    if (log === undefined) return;
    // Compact once most of the list is gone: the cost is spread over the deletes before.
    if (++log.deleted > 1024 && log.deleted * 2 > log.entries.length) {
      log.entries = log.entries.filter((entry) => this.#isStored(entry.slot));
      log.deleted = 0;
      if (log.entries.length === 0) this.#byPrincipal.delete(principalId);
    }
  }

  /** The principal's stored messages with a key above `after`, in key order, at most `limit`. */
  read(principalId: string, after: number | null, limit: number): ReportedRow[] {
    const entries = this.#byPrincipal.get(principalId)?.entries;
    if (entries === undefined || limit <= 0) return [];
    let low = 0;
    let high = entries.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (after !== null && entries[mid]!.seq <= after) low = mid + 1;
      else high = mid;
    }
    const found: ReportedRow[] = [];
    for (let i = low; i < entries.length && found.length < limit; i++) {
      const { seq, slot } = entries[i]!;
      if (this.#isStored(slot)) found.push({ seq, row: slot.row() });
    }
    return found;
  }
}
