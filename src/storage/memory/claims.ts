/**
 * What a claim takes, in memory: the fair queue of `queued` messages the submit worker
 * claims from ({@link MessageQueue}) and the queue of pending delivery reports the report
 * dispatcher claims from ({@link ReportQueue}). The order in which work is handed out is
 * decided here and nowhere else, so a change to that order (which messages go first, how
 * much each key gets) is a change to this file. Both queues are kept so that a claim costs
 * what it takes, not the size of the backlog: a claim runs every few milliseconds under
 * load, and a backlog can hold hundreds of thousands of messages over thousands of keys.
 * The message queue also counts what it holds, by class, for everyone and per principal
 * ({@link MessageQueue.count}, `Storage.countQueued`), at the same cost whatever its size.
 *
 * @module
 */
import { MinHeap } from '../../util/min-heap.js';
import { fairTags, PRIORITY_RANK } from '../../lifecycle/fair-tags.js';
import { validityElapsed } from '../../lifecycle/timing.js';
import type { ClaimOptions, NewMessage, Priority, QueueCount } from '../contract.js';
import { AcceptedOrder } from './accepted.js';
import { leaseIsLive, Place, type StoredCallback, type StoredMessage } from './records.js';

/** Fair order within a class: the smaller tag first, then the earlier accepted. */
const fairFirst = (a: Place, b: Place): boolean => a.tag < b.tag || (a.tag === b.tag && a.seq < b.seq);

/** A not-due place's entry, stale once the place has moved on (`where` differs). */
interface NotDue {
  at: number;
  place: Place;
  where: number;
}

/**
 * A principal's queued places in one class, in tag order (the order they were stored),
 * the last one still queued; `departed` of the others have left the queue since. `accepted`
 * holds the queued ones by acceptance time, for `countQueued`.
 */
interface Backlog {
  places: Place[];
  departed: number;
  accepted: AcceptedOrder;
}

/** The class rank of `priority`; a message from an untyped caller without one is bulk. */
function rankOf(priority: Priority): number {
  return PRIORITY_RANK[priority] ?? PRIORITY_RANK.bulk;
}

/** The weight a tag is spaced by: the message's, or 1 when it is not a positive number. */
function weightOf(message: Pick<NewMessage, 'weight'>): number {
  const weight = message.weight;
  return weight > 0 && Number.isFinite(weight) ? weight : 1;
}

/** Whether a claim at `now` may take `message` (queued): due, under no live lease, and still valid. */
function claimable(message: StoredMessage, now: number): boolean {
  return message.nextAttemptAt <= now && !leaseIsLive(message.leaseUntil, now) && !validityElapsed(message.validUntil, now);
}

/**
 * The `queued` messages in fair order (contract: `Storage.claimMessages`), and the claim
 * that leases the first claimable ones.
 *
 * Each message gets a virtual finish tag when it is stored (`fairTags`), from its
 * principal's last queued tag in its class and the class's head; a claim takes them by
 * (class rank, tag, insertion order). The claimable places of each class wait in a heap by
 * that order; the leased ones in a set until their lease ends, and the not-due ones (given
 * back for a retry) in a heap by due time, each moved back to its class's heap when it may be
 * claimed again, with the tag it had. A claim of `k` is then O(k log n) plus the places it
 * wakes, however many principals are queued. Entries of places that moved on are left
 * behind and skipped when they come up.
 *
 * The head a request's tags start from is the smallest tag a claim could take now, so that
 * a principal that was idle starts its turn there: its first message gets that very tag
 * and comes right after the message holding it (insertion order breaks the tie), i.e.
 * after at most one message of each other principal. When nothing is claimable (all leased
 * or not due) it is the largest tag given in the class, so that a message given back for a
 * retry is not overtaken by messages accepted after it.
 */
export class MessageQueue {
  /** Per class rank: the places a claim may take, in fair order. */
  private readonly ready = [new MinHeap<Place>(fairFirst), new MinHeap<Place>(fairFirst)];
  /** Places under a lease (claimed, or stored leased); claimable again when it ends. */
  private readonly leased = new Set<Place>();
  /** No lease in `leased` ends before this (it may be earlier than the true first). */
  private earliestLeaseEnd = Infinity;
  /** Places given back for a retry, by when they are due. */
  private readonly notDue = new MinHeap<NotDue>((a, b) => a.at < b.at);
  /** Numbers the entries of `notDue`, so that a place knows its current one. */
  private notDueEntries = 0;
  /** Per class rank: principalId -> its queued places. */
  private readonly backlogs = [new Map<string, Backlog>(), new Map<string, Backlog>()];
  /** Per class rank: the largest tag given so far (`null`: none). */
  private readonly lastTags: (number | null)[] = [null, null];
  /** Per class rank: every queued place, by acceptance time (what `count` reads). */
  private readonly accepted = [new AcceptedOrder(false), new AcceptedOrder(false)];

  /**
   * Queues `stored`, just stored from `messages` (one request, in order) or due at `now`
   * (scheduled ones): each run of one principal's messages of one class gets its tags after
   * the principal's last queued one in the class, or after the class's head as of `now`.
   */
  add(messages: readonly Pick<NewMessage, 'weight'>[], stored: readonly StoredMessage[], now = stored[0]?.createdAt ?? 0): void {
    if (stored.length === 0) return;
    const heads: (number | null | undefined)[] = [undefined, undefined];
    for (let from = 0; from < stored.length; ) {
      const first = stored[from]!;
      const rank = rankOf(first.priority);
      const weight = weightOf(messages[from]!);
      let to = from + 1;
      while (to < stored.length && stored[to]!.principalId === first.principalId && rankOf(stored[to]!.priority) === rank && weightOf(messages[to]!) === weight) to++;
      let head = heads[rank];
      if (head === undefined) head = heads[rank] = this.head(rank, now);
      const backlog = this.backlogOf(rank, first.principalId);
      const last = backlog.places.length === 0 ? null : backlog.places[backlog.places.length - 1]!.tag;
      const tags = fairTags(to - from, weight, last, head);
      for (let i = from; i < to; i++) {
        const message = stored[i]!;
        const place = new Place(message, rank, tags[i - from]!);
        message.place = place;
        backlog.places.push(place);
        backlog.accepted.add(place);
        this.accepted[rank]!.add(place);
        if (message.leaseUntil === null) this.ready[rank]!.push(place);
        else this.lease(place, message.leaseUntil);
      }
      const lastTag = tags[tags.length - 1]!;
      if (lastTag > (this.lastTags[rank] ?? Number.NEGATIVE_INFINITY)) this.lastTags[rank] = lastTag;
      from = to;
    }
  }

  /** Takes `message` out of the queue (it left `queued`, or is gone); its place goes stale. */
  delete(message: StoredMessage): void {
    const place = message.place;
    if (place === null) return;
    message.place = null;
    if (place.where === Place.LEASED) this.leased.delete(place);
    const backlogs = this.backlogs[place.rank]!;
    const backlog = backlogs.get(message.principalId)!;
    backlog.accepted.remove(place);
    this.accepted[place.rank]!.remove(place);
    const places = backlog.places;
    if (places[places.length - 1] === place) {
      // The principal's last queued tag is now that of its latest message still queued.
      places.pop();
      while (places.length > 0 && !places[places.length - 1]!.queued) {
        places.pop();
        backlog.departed--;
      }
    } else backlog.departed++;
    if (places.length === 0) backlogs.delete(message.principalId);
    else if (backlog.departed > 32 && backlog.departed * 2 > places.length) {
      backlog.places = places.filter((p) => p.queued);
      backlog.departed = 0;
    }
  }

  /** Puts `message` back after a retry was scheduled (its lease ended, `nextAttemptAt` moved): same tag. */
  retry(message: StoredMessage): void {
    const place = message.place;
    // A place in its class's heap stays there: a claim checks that it is due.
    if (place === null || place.where === Place.READY) return;
    if (place.where === Place.LEASED) this.leased.delete(place);
    this.waitUntilDue(place);
  }

  /** Leases up to `limit` claimable messages to `owner`, in fair order; returns them. */
  claim(options: ClaimOptions): StoredMessage[] {
    const claimed: StoredMessage[] = [];
    const limit = Math.max(0, options.limit);
    if (limit === 0) return claimed;
    const now = options.now;
    this.wake(now);
    for (const ready of this.ready) {
      while (claimed.length < limit) {
        const place = ready.pop();
        if (place === undefined) break;
        if (!place.queued || place.where !== Place.READY) continue;
        const message = place.message;
        if (claimable(message, now)) {
          message.leaseOwner = options.owner;
          message.leaseUntil = now + options.leaseMs;
          claimed.push(message);
        }
        this.park(place, now);
      }
    }
    return claimed;
  }

  /**
   * The queued messages (leased and not due ones too) by class, and when the oldest was
   * accepted: everyone's, or those of `principalId`. O(classes): each class keeps its count
   * and oldest, for everyone and per principal, as messages enter and leave.
   */
  count(principalId?: string): QueueCount {
    const orders = principalId === undefined ? this.accepted : this.backlogs.map((backlogs) => backlogs.get(principalId)?.accepted);
    let oldestAcceptedAt: number | null = null;
    for (const order of orders) {
      const oldest = order?.oldest() ?? null;
      if (oldest !== null && (oldestAcceptedAt === null || oldest < oldestAcceptedAt)) oldestAcceptedAt = oldest;
    }
    return {
      transactional: orders[PRIORITY_RANK.transactional]?.size ?? 0,
      bulk: orders[PRIORITY_RANK.bulk]?.size ?? 0,
      oldestAcceptedAt,
    };
  }

  /** The smallest tag a claim at `now` could take in class `rank`, else the largest given. */
  private head(rank: number, now: number): number | null {
    this.wake(now);
    const ready = this.ready[rank]!;
    for (let top = ready.peek(); top !== undefined; top = ready.peek()) {
      const current = top.queued && top.where === Place.READY;
      if (current && claimable(top.message, now)) return top.tag;
      ready.pop();
      if (current) this.park(top, now);
    }
    return this.lastTags[rank] ?? null;
  }

  /** The queued places of `principalId` in class `rank`, made if it has none. */
  private backlogOf(rank: number, principalId: string): Backlog {
    const backlogs = this.backlogs[rank]!;
    let backlog = backlogs.get(principalId);
    if (backlog === undefined) backlogs.set(principalId, (backlog = { places: [], departed: 0, accepted: new AcceptedOrder(true) }));
    return backlog;
  }

  /** Sets aside `place`, taken from its class's heap: leased, or not due at `now`. */
  private park(place: Place, now: number): void {
    const message = place.message;
    if (leaseIsLive(message.leaseUntil, now)) this.lease(place, message.leaseUntil!);
    else this.waitUntilDue(place);
  }

  /** Sets `place` aside until its lease ends at `until`. */
  private lease(place: Place, until: number): void {
    place.where = Place.LEASED;
    this.leased.add(place);
    if (until < this.earliestLeaseEnd) this.earliestLeaseEnd = until;
  }

  /** Sets `place` aside until its message is due. */
  private waitUntilDue(place: Place): void {
    place.where = ++this.notDueEntries;
    this.notDue.push({ at: place.message.nextAttemptAt, place, where: place.where });
  }

  /** Puts back in their class's heap the places whose lease has ended, or that are due, by `now`. */
  private wake(now: number): void {
    if (now >= this.earliestLeaseEnd) {
      let earliest = Infinity;
      for (const place of this.leased) {
        const until = place.message.leaseUntil;
        if (until !== null && until > now) {
          if (until < earliest) earliest = until;
          continue;
        }
        this.leased.delete(place);
        if (place.message.nextAttemptAt <= now) this.makeReady(place);
        else this.waitUntilDue(place);
      }
      this.earliestLeaseEnd = earliest;
    }
    for (let top = this.notDue.peek(); top !== undefined && top.at <= now; top = this.notDue.peek()) {
      this.notDue.pop();
      if (top.place.queued && top.place.where === top.where) this.makeReady(top.place);
    }
  }

  /** Puts `place` in its class's heap, where a claim may take it. */
  private makeReady(place: Place): void {
    place.where = Place.READY;
    this.ready[place.rank]!.push(place);
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
