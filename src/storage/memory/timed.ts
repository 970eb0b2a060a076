/**
 * What the memory storage keeps for the time-aware steps (storage/lifecycle/timing.ts): the scheduled
 * messages by when they are due, and the queued messages with a validity by when it ends, so
 * that promoting the due ones and expiring the stale ones cost what they take, not a walk of
 * every message.
 *
 * @module
 */
import { MinHeap } from '../../util/min-heap.js';
import type { StoredMessage } from './records.js';

/** A message waiting for a time: its `at`, and the weight it is queued with (scheduled ones). */
interface Waiting {
  at: number;
  message: StoredMessage;
  weight: number;
}

const earlierFirst = (a: Waiting, b: Waiting): boolean => a.at < b.at || (a.at === b.at && a.message.seq < b.message.seq);

/**
 * The messages waiting for a time, by that time. Entries of messages that moved on (a
 * scheduled message cancelled, a queued one submitted) are left behind and skipped when
 * they come up: the caller checks the state of what it takes.
 */
export class TimedMessages {
  readonly #scheduled = new MinHeap<Waiting>(earlierFirst);
  readonly #validity = new MinHeap<Waiting>(earlierFirst);

  /** Remembers `message`, just stored: when it is due (if scheduled) and when it goes stale (if it has a validity). */
  add(message: StoredMessage, weight: number): void {
    if (message.state === 'scheduled') this.#scheduled.push({ at: message.sendAt!, message, weight });
    if (message.validUntil !== null && message.validUntil !== undefined) this.#validity.push({ at: message.validUntil, message, weight });
  }

  /** Takes up to `limit` messages still `scheduled` and due at `now`, earliest first, with their weights. */
  due(now: number, limit: number): Waiting[] {
    const taken: Waiting[] = [];
    while (taken.length < limit) {
      const top = this.#scheduled.peek();
      if (top === undefined || top.at > now) break;
      this.#scheduled.pop();
      if (top.message.state === 'scheduled') taken.push(top);
    }
    return taken;
  }

  /**
   * Takes up to `limit` messages still `queued` whose validity has ended by `now` and that
   * `free` says no lease holds; one a lease holds waits for it to end and is looked at again.
   */
  stale(now: number, limit: number, free: (message: StoredMessage) => boolean): StoredMessage[] {
    const taken: StoredMessage[] = [];
    const held: Waiting[] = [];
    while (taken.length < limit) {
      const top = this.#validity.peek();
      if (top === undefined || top.at > now) break;
      this.#validity.pop();
      const message = top.message;
      if (message.state !== 'queued' && message.state !== 'scheduled') continue;
      if (message.state === 'queued' && free(message)) taken.push(message);
      else held.push({ at: Math.max(now + 1, message.leaseUntil ?? now + 1), message, weight: top.weight });
    }
    for (const entry of held) this.#validity.push(entry);
    return taken;
  }
}
