/**
 * The messages the memory storage's sweeps take by age: the ended ones a purge may delete, by
 * when they ended ({@link PurgeOrder}), and the submitted ones still waiting for a receipt,
 * by when they last changed ({@link ReceiptWait}). Each sweep then costs what it takes, not a
 * walk of every retained message: a day at 600 requests a minute is 864,000 of them.
 *
 * @module
 */
import { MinHeap } from '../../util/min-heap.js';
import type { StoredMessage } from './records.js';

const changedFirst = (a: StoredMessage, b: StoredMessage): boolean => a.updatedAt < b.updatedAt || (a.updatedAt === b.updatedAt && a.seq < b.seq);

/**
 * The ended messages that have no report pending, by when they ended (`updatedAt`, then
 * acceptance): what a purge may delete, oldest first. A message joins when it ends without
 * a report to send, or when its report is done; an ended message's `updatedAt` never
 * changes again, so its place holds until the purge takes it.
 */
export class PurgeOrder {
  readonly #heap = new MinHeap<StoredMessage>(changedFirst);

  /** Adds `message`, ended with no report pending. */
  add(message: StoredMessage): void {
    this.#heap.push(message);
  }

  /** Takes up to `limit` messages that ended before `before`, oldest first. */
  take(before: number, limit: number): StoredMessage[] {
    const taken: StoredMessage[] = [];
    while (taken.length < limit) {
      const oldest = this.#heap.peek();
      if (oldest === undefined || oldest.updatedAt >= before) break;
      taken.push(this.#heap.pop()!);
    }
    return taken;
  }
}

/** A submitted message, with its `updatedAt` when the entry was made. */
interface Waiting {
  at: number;
  message: StoredMessage;
}

const earlierFirst = (a: Waiting, b: Waiting): boolean => a.at < b.at || (a.at === b.at && a.message.seq < b.message.seq);

/**
 * The submitted messages by when they last changed: what the receipt timeout ends, oldest
 * first. A part's receipt moves a message's `updatedAt` on, and a last receipt ends it; its
 * entry is not moved then but checked when it comes up: one that ended is dropped, one that
 * changed since goes back in at its new time. So an entry (a small object) outlives its
 * message's wait by up to the receipt timeout, against a walk of every message per batch.
 */
export class ReceiptWait {
  readonly #heap = new MinHeap<Waiting>(earlierFirst);

  /** Adds `message`, just submitted. */
  add(message: StoredMessage): void {
    this.#heap.push({ at: message.updatedAt, message });
  }

  /** Takes up to `limit` messages still submitted and unchanged since before `before`, oldest first. */
  overdue(before: number, limit: number): StoredMessage[] {
    const taken: StoredMessage[] = [];
    while (taken.length < limit) {
      const oldest = this.#heap.peek();
      if (oldest === undefined || oldest.at >= before) break;
      this.#heap.pop();
      const { message } = oldest;
      if (message.state !== 'submitted') continue;
      if (message.updatedAt !== oldest.at) this.#heap.push({ at: message.updatedAt, message });
      else taken.push(message);
    }
    return taken;
  }
}
