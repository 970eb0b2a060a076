/**
 * What a claim takes, in memory: the queue of `queued` messages the submit worker claims
 * from ({@link MessageQueue}) and the queue of pending delivery reports the report
 * dispatcher claims from ({@link ReportQueue}). The order in which work is handed out is
 * decided here and nowhere else, so a change to that order (which messages go first, how
 * much each key gets) is a change to this file. Both queues are kept so that a claim costs
 * what it takes, not the size of the backlog: a claim runs every few milliseconds under
 * load, and a backlog can hold thousands of messages.
 *
 * @module
 */
import { MinHeap } from '../../util/min-heap.js';
import type { ClaimOptions } from '../contract.js';
import { leaseIsLive, type StoredCallback, type StoredMessage } from './records.js';

/**
 * The `queued` messages, in insertion order, and the claim that leases the oldest due ones.
 * It holds refs, not messages: the store's map of messages is the one owner of each.
 */
export class MessageQueue {
  /** Refs of messages in state `queued`, the only ones a claim looks at. */
  private readonly queued = new Set<string>();
  /** The latest `createdAt` added, and whether every add came in `createdAt` order. */
  private lastCreatedAt = -Infinity;
  private createdInOrder = true;

  /** @param messages The store's messages by ref, where each queued ref is found. */
  constructor(private readonly messages: ReadonlyMap<string, StoredMessage>) {}

  /** Queues `message`, just stored. */
  add(message: StoredMessage): void {
    // Claims walk `queued` in insertion order and stop early while that is also the
    // (createdAt, seq) order, i.e. while no message was created before the previous one.
    if (message.createdAt < this.lastCreatedAt) this.createdInOrder = false;
    else this.lastCreatedAt = message.createdAt;
    this.queued.add(message.ref);
  }

  /** Takes message `ref` out of the queue (it left `queued`, or is gone). */
  delete(ref: string): void {
    this.queued.delete(ref);
  }

  /** Leases up to `limit` due, unleased messages to `owner`, oldest first; returns them. */
  claim(options: ClaimOptions): StoredMessage[] {
    const due: StoredMessage[] = [];
    const limit = Math.max(0, options.limit);
    // `queued` holds refs in insertion (seq) order; while that is also createdAt order the
    // first `limit` due ones are the answer, and a backlog of thousands is not walked and
    // sorted on every claim.
    const inOrder = this.createdInOrder;
    for (const ref of this.queued) {
      if (inOrder && due.length >= limit) break;
      const stored = this.messages.get(ref)!;
      if (stored.nextAttemptAt <= options.now && !leaseIsLive(stored.leaseUntil, options.now)) due.push(stored);
    }
    if (!inOrder) due.sort((a, b) => a.createdAt - b.createdAt || a.seq - b.seq);
    const claimed = due.length > limit ? due.slice(0, limit) : due;
    for (const stored of claimed) {
      stored.leaseOwner = options.owner;
      stored.leaseUntil = options.now + options.leaseMs;
    }
    return claimed;
  }
}

/** A report's place in the due queue; stale once its callback's `version` has moved on. */
interface DueEntry {
  at: number;
  seq: number;
  callback: StoredCallback;
  version: number;
}

/** Due order: the earlier next attempt first, then the older report. */
const dueFirst = (a: DueEntry, b: DueEntry): boolean => a.at < b.at || (a.at === b.at && a.seq < b.seq);

/**
 * The pending reports, due or leased, and the claim that leases the earliest due ones.
 *
 * Pending reports not under a lease wait in a heap by due order: a claim takes from the top
 * rather than walk and sort every pending report. Entries are left behind when a report is
 * leased or attempted and skipped when they come up. Reports under a lease (being sent, or
 * deferred) wait aside until it ends.
 */
export class ReportQueue {
  private readonly due = new MinHeap<DueEntry>(dueFirst);
  /** Pending reports under a lease; due again when it ends. */
  private readonly leased = new Set<StoredCallback>();
  /** No lease in `leased` ends before this (it may be earlier than the true first). */
  private earliestLeaseEnd = Infinity;

  /** Puts `callback` in the due queue at `at`, as of its current version. */
  queue(callback: StoredCallback, at: number): void {
    this.due.push({ at, seq: callback.seq, callback, version: callback.version });
  }

  /** Leases `callback` to `owner` until `until`; its due-queue entries go stale. */
  lease(callback: StoredCallback, owner: string | null, until: number): void {
    callback.leaseOwner = owner;
    callback.leaseUntil = until;
    callback.version++;
    this.leased.add(callback);
    if (until < this.earliestLeaseEnd) this.earliestLeaseEnd = until;
  }

  /** Ends `callback`'s lease, as an attempt does; its due-queue entries go stale. */
  release(callback: StoredCallback): void {
    callback.leaseOwner = null;
    callback.leaseUntil = null;
    callback.version++;
    this.leased.delete(callback);
  }

  /** Leases up to `limit` due pending reports to `owner`, earliest due first; returns them. */
  claim(options: ClaimOptions): StoredCallback[] {
    this.endLeases(options.now);
    const claimed: StoredCallback[] = [];
    while (claimed.length < options.limit) {
      const top = this.due.peek();
      if (top === undefined || top.at > options.now) break;
      this.due.pop();
      const callback = top.callback;
      if (callback.state.state !== 'pending' || top.version !== callback.version) continue;
      if (leaseIsLive(callback.leaseUntil, options.now)) {
        // Its lease ended at a later `now` than this one: under this clock it still holds.
        this.lease(callback, callback.leaseOwner, callback.leaseUntil!);
        continue;
      }
      this.lease(callback, options.owner, options.now + options.leaseMs);
      claimed.push(callback);
    }
    return claimed;
  }

  /** Puts the reports whose lease has ended by `now` back in the due queue. */
  private endLeases(now: number): void {
    if (now < this.earliestLeaseEnd) return;
    let earliest = Infinity;
    for (const callback of this.leased) {
      const until = callback.leaseUntil!;
      if (until > now) {
        earliest = Math.min(earliest, until);
        continue;
      }
      this.leased.delete(callback);
      this.queue(callback, callback.state.nextAttemptAt ?? 0);
    }
    this.earliestLeaseEnd = earliest;
  }
}
