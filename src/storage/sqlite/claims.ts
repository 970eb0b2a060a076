/**
 * What a claim takes, in SQLite: the queue of `queued` messages the submit worker claims
 * from (the table `sms_queue`), with what puts a message in its place when it is stored
 * ({@link fairPlaces}) and takes it out when it leaves, the pending delivery reports the
 * report dispatcher claims, and the steps that lease both. The order in which work is
 * handed out is decided here and nowhere else, so a change to that order (which messages
 * go first, how much each key gets) is a change to this file.
 *
 * The order is the contract's fair order (storage/contract.ts, `claimMessages`): by rank
 * (transactional first), then by fair tag (lifecycle/fair-tags.ts: principals in turn by
 * weight), then by message id (acceptance order; ties between principals). Both are fixed
 * when a message is stored, so a claim is one scan of `sms_queue` in order, however many
 * principals have messages queued, and a message given back for a retry keeps its place.
 *
 * Why a table rather than an index of `sms_messages`: `sms_queue` is clustered by that
 * order (WITHOUT ROWID, primary key rank, tag, id) and holds what a claim checks and writes
 * (due time, lease), so a claim of 256 reads and leases 256 adjacent rows, a few pages,
 * whichever principals they belong to; leasing the message rows themselves dirtied one page
 * of `sms_messages` per principal in the claim (migration 5 has the figures). A message
 * row is only read by a claim. Every step that takes a message out of `queued` takes its
 * queue row out in the same transaction ({@link ClaimStatements.dequeue}).
 *
 * The key leads with `retrying`: a message given back for a retry and not yet due waits
 * under 1, with its rank and tag, and returns under 0 when it is due (a claim wakes it
 * first: {@link ClaimStatements.wakeRetries}), where its tag puts it back in its place. So the
 * rows a claim or an insert's head lookup passes over are only the leased ones (the
 * messages being submitted), not a backlog that a carrier outage has sent back for retries
 * (100,000 such rows ahead cost every insert 9 ms).
 *
 * Every `LIMIT` of a bound value is written `LIMIT +?` (see statements.ts).
 *
 * @module
 */
import type Database from 'better-sqlite3';
import { fairTags } from '../../lifecycle/fair-tags.js';
import { validityElapsed } from '../../lifecycle/timing.js';
import {
  loadRecord,
  messageRecord,
  partsOf,
  rankOf,
  type CallbackRow,
  type MessageRow,
  type ReportReads,
  type RowReader,
} from './rows.js';
import type { ClaimOptions, DueCallback, MessageRecord, NewMessage } from '../contract.js';

/** Due at `@now` and not held by a live lease: what a claim may take. */
const CLAIMABLE = 'next_attempt_at <= @now AND (lease_until IS NULL OR lease_until <= @now)';

/** The claim order of queued messages: the order of `sms_queue`'s primary key. */
const FAIR_ORDER = 'priority, fair_tag, message_id';

/** Principal `@principal`'s last queued tag in class `@rank` (retrying or not): the last of its entries in `sms_queue_principal`. */
const QUEUE_TAIL = `SELECT fair_tag FROM sms_queue WHERE principal_id = @principal AND priority = @rank
  ORDER BY principal_id DESC, priority DESC, fair_tag DESC LIMIT 1`;

/** A row of `sms_queue` by its key, as {@link ClaimStatements.dueMessages} returns it: `[rank, tag, message id]`. */
export type QueueKey = [rank: number, tag: number, messageId: number];

/** The claims' own statements; `@now` and `@limit` are the claim's time and how many it takes at most. */
export interface ClaimStatements {
  /** Keys of due, unleased queued messages, in fair order (retries woken first). */
  dueMessages: Database.Statement<{ now: number; limit: number }, QueueKey>;
  /** Leases the queued message of a key (not retrying) to an owner until a time: owner, until, then the key. */
  leaseMessage: Database.Statement<[string, number, ...QueueKey]>;
  /** Whether a retry is due at `@now` (then {@link ClaimStatements.wakeRetries}). */
  retryDue: Database.Statement<{ now: number }, number>;
  /** Puts back in the claim order the retries due at `@now`, in their places. */
  wakeRetries: Database.Statement<{ now: number }>;
  /**
   * Queues a message just stored: its key, principal, due time (its acceptance), the lease
   * it was stored under (owner and end, or `null`s), and its acceptance time (`created_at`,
   * which countQueued reads: statements.ts).
   */
  enqueue: Database.Statement<[...QueueKey, string, number, string | null, number | null, number]>;
  /**
   * Takes the message of a key out of the queue (it left `queued`), one statement for each
   * `retrying` (0, 1) it may be under: see {@link leaveQueue}.
   */
  dequeue: readonly [Database.Statement<QueueKey>, Database.Statement<QueueKey>];
  /**
   * A retry: the message of a key is due again at a time, its lease ended; its place (rank,
   * tag) stays. One statement for each `retrying` (0, 1) it was under; the new `retrying`,
   * the time, then the key: see {@link retryLater}.
   */
  requeue: readonly [Database.Statement<[0 | 1, number, ...QueueKey]>, Database.Statement<[0 | 1, number, ...QueueKey]>];
  /**
   * `[head, tail]`: the head of class `@rank` at `@now` ({@link ClassHead}: the due retries
   * not yet woken count), and principal `@principal`'s tail in it
   * ({@link ClaimStatements.queueTail}); `null` for none. One statement for the lookups of a
   * request, which mostly has one principal and class.
   */
  queuePlace: Database.Statement<{ rank: number; now: number; principal: string }, [number | null, number | null]>;
  /**
   * Principal `@principal`'s last queued tag in class `@rank` (leased or not, due or not:
   * its whole backlog), from `sms_queue_principal`, or `undefined`.
   */
  queueTail: Database.Statement<{ principal: string; rank: number }, number>;
  /** Due, unleased pending reports, the earliest due first (the order of `sms_callbacks_due`). */
  dueCallbacks: Database.Statement<{ now: number; limit: number }, CallbackRow>;
  /** Leases report `id` to an owner until a time. */
  leaseCallback: Database.Statement<[string, number, number]>;
}

/** Prepares the claims' statements on `db`, with the others (statements.ts) when the schema is ready. */
export function prepareClaimStatements(db: Database.Database): ClaimStatements {
  const key = 'priority = ? AND fair_tag = ? AND message_id = ?';
  // The last tag of class @rank among the rows with `retrying` = r.
  const classEnd = (r: 0 | 1) =>
    `SELECT fair_tag FROM sms_queue WHERE retrying = ${r} AND priority = @rank ORDER BY fair_tag DESC, message_id DESC LIMIT 1`;
  return {
    dueMessages: db
      .prepare<{ now: number; limit: number }, QueueKey>(`
        SELECT priority, fair_tag, message_id FROM sms_queue WHERE retrying = 0 AND ${CLAIMABLE}
        ORDER BY ${FAIR_ORDER} LIMIT +@limit`)
      .raw(true),
    leaseMessage: db.prepare<[string, number, ...QueueKey]>(
      `UPDATE sms_queue SET lease_owner = ?, lease_until = ? WHERE retrying = 0 AND ${key}`,
    ),
    retryDue: db
      .prepare<{ now: number }, number>(
        'SELECT 1 FROM sms_queue INDEXED BY sms_queue_retries WHERE retrying = 1 AND next_attempt_at <= @now LIMIT 1',
      )
      .pluck(),
    // Changes a key column, so SQLite collects the rows first (a temporary table): run only
    // when retryDue found one.
    wakeRetries: db.prepare<{ now: number }>(
      'UPDATE sms_queue INDEXED BY sms_queue_retries SET retrying = 0 WHERE retrying = 1 AND next_attempt_at <= @now',
    ),
    enqueue: db.prepare<[...QueueKey, string, number, string | null, number | null, number]>(`
      INSERT INTO sms_queue (retrying, priority, fair_tag, message_id, principal_id, next_attempt_at, lease_owner, lease_until,
        created_at)
      VALUES (0, ?, ?, ?, ?, ?, ?, ?, ?)`),
    // One statement per `retrying`, written in: `IN (0, 1)` runs with a temporary table, and
    // `retrying = ?` has SQLite prepare the statement again at every run, since the bound
    // value decides whether the partial index sms_queue_retries (`WHERE retrying = 1`) applies.
    dequeue: [0, 1].map((r) => db.prepare<QueueKey>(`DELETE FROM sms_queue WHERE retrying = ${r} AND ${key}`)) as unknown as ClaimStatements['dequeue'],
    requeue: [0, 1].map((r) =>
      db.prepare<[0 | 1, number, ...QueueKey]>(`
        UPDATE sms_queue SET retrying = ?, next_attempt_at = ?, lease_owner = NULL, lease_until = NULL
        WHERE retrying = ${r} AND ${key}`),
    ) as unknown as ClaimStatements['requeue'],
    // The smallest claimable tag: the first claimable row not retrying, or a retry due but
    // not yet woken (min() passes over NULLs); else the largest tag queued, retrying or not.
    // coalesce() evaluates its second argument only when the first is NULL.
    queuePlace: db
      .prepare<{ rank: number; now: number; principal: string }, [number | null, number | null]>(`
        SELECT coalesce(
            (SELECT min(fair_tag) FROM (
              SELECT * FROM (SELECT fair_tag FROM sms_queue WHERE retrying = 0 AND priority = @rank AND ${CLAIMABLE}
                ORDER BY ${FAIR_ORDER} LIMIT 1)
              UNION ALL
              SELECT min(fair_tag) FROM sms_queue INDEXED BY sms_queue_retries
                WHERE retrying = 1 AND next_attempt_at <= @now AND priority = @rank)),
            (SELECT max(fair_tag) FROM (SELECT * FROM (${classEnd(0)}) UNION ALL SELECT * FROM (${classEnd(1)})))),
          (${QUEUE_TAIL})`)
      .raw(true),
    queueTail: db.prepare<{ principal: string; rank: number }, number>(QUEUE_TAIL).pluck(),
    dueCallbacks: db.prepare<{ now: number; limit: number }, CallbackRow>(`
      SELECT * FROM sms_callbacks
      WHERE state = 'pending' AND next_attempt_at <= @now AND (lease_until IS NULL OR lease_until <= @now)
      ORDER BY next_attempt_at, id LIMIT +@limit`),
    leaseCallback: db.prepare<[string, number, number]>(
      'UPDATE sms_callbacks SET lease_owner = ?, lease_until = ? WHERE id = ?',
    ),
  };
}

/** The queue key of a stored message (its row). */
export function queueKey(row: MessageRow): QueueKey {
  return [row.priority, row.fair_tag, row.id];
}

/** Puts back in the claim order, in their places, the retries due at `now`. */
function wakeDueRetries(s: ClaimStatements, now: number): void {
  if (s.retryDue.get({ now }) !== undefined) s.wakeRetries.run({ now });
}

/**
 * Takes queued message `row` out of the queue, as it leaves `queued` (in the same transaction).
 * Mostly it was claimed, so not retrying; one given back for a retry can be ended while it
 * waits (`finish`).
 */
export function leaveQueue(s: ClaimStatements, row: MessageRow): void {
  const key = queueKey(row);
  if (s.dequeue[0].run(...key).changes === 0) s.dequeue[1].run(...key);
}

/**
 * Gives the message of `key` back for a retry at `nextAttemptAt` (decided at `now`): it waits
 * under `retrying` until due, then is claimed in its place (its key's rank and tag).
 */
export function retryLater(s: ClaimStatements, key: QueueKey, nextAttemptAt: number, now: number): void {
  const retrying = nextAttemptAt > now ? 1 : 0;
  // Mostly it was claimed, so not retrying; given back twice without a claim, it is.
  if (s.requeue[0].run(retrying, nextAttemptAt, ...key).changes === 0) s.requeue[1].run(retrying, nextAttemptAt, ...key);
}

/** What the claims read besides their own statements: a message row by id, and its report. */
export interface ClaimReads extends ReportReads {
  /** The message row with this id. */
  messageById: RowReader<[number], MessageRow>;
}

/** A stored message's place in the claim order: its class's rank and its fair tag. */
export interface FairPlace {
  rank: number;
  tag: number;
}

/**
 * A message's weight; one that is not a positive finite number (a host's own code that
 * predates weights) counts as 1, the default, rather than failing the request or giving
 * tags no spacing (0) or an infinite one.
 */
function weightOf(m: NewMessage): number {
  const weight = m.weight as unknown;
  return typeof weight === 'number' && Number.isFinite(weight) && weight > 0 ? weight : 1;
}

/**
 * The head of a class, where a principal with nothing queued in it starts a request
 * (`fairTags`, lifecycle/fair-tags.ts; the contract suite's fairness.ts spells out the same
 * rule): the smallest tag a claim could take now, so that its first message gets that very
 * tag and is claimed right after the message holding it (the id breaks the tie), i.e. after
 * at most one message of each other principal. When nothing is claimable (all leased or not
 * due), the largest tag queued, so that a message given back for a retry, or leased, is not
 * overtaken by messages accepted after it (a tag given but no longer queued orders nothing:
 * tags are only compared with the tags queued). `null` when the class has nothing queued.
 */
type ClassHead = number | null;

/**
 * The places of `messages` (one request, in order), about to be stored: each run of one
 * principal's messages of one class (and one weight) gets its tags from `fairTags`, after the
 * principal's last queued tag in the class (read once per principal and class, then carried
 * along the request) or from the class's head ({@link ClassHead}: read once per class, at the
 * request's latest acceptance time), whichever is later. Runs inside the insert's
 * transaction: the statements see every message stored before, in this group of writes too,
 * and SQLite has one writer, so the turns are exact (two processes on one file take turns
 * for the write lock).
 */
export function fairPlaces(s: ClaimStatements, messages: readonly NewMessage[]): FairPlace[] {
  let now = Number.NEGATIVE_INFINITY;
  for (const m of messages) if (m.createdAt > now) now = m.createdAt;
  /** By rank (`PRIORITY_RANK`: 0 or 1): the class's head, once read. */
  const heads: (ClassHead | undefined)[] = [undefined, undefined];
  /** `rank\0principal` -> its last tag given in this request; made for a request of several runs only. */
  let lasts: Map<string, number> | undefined;
  const places = new Array<FairPlace>(messages.length);
  for (let from = 0; from < messages.length; ) {
    const first = messages[from]!;
    const principal = first.principalId;
    const rank = rankOf(first);
    const weight = weightOf(first);
    let to = from + 1;
    while (
      to < messages.length &&
      messages[to]!.principalId === principal &&
      rankOf(messages[to]!) === rank &&
      weightOf(messages[to]!) === weight
    ) {
      to++;
    }
    let head = heads[rank];
    let last: number | null | undefined;
    if (head === undefined) {
      // The first run of its class in this request: its principal has no tag here yet either.
      const [classHead, tail] = s.queuePlace.get({ rank, now, principal })!;
      heads[rank] = head = classHead;
      last = tail;
    } else {
      last = lasts?.get(`${rank}\0${principal}`) ?? s.queueTail.get({ principal, rank }) ?? null;
    }
    const tags = fairTags(to - from, weight, last, head);
    for (let i = from; i < to; i++) places[i] = { rank, tag: tags[i - from]! };
    if (to < messages.length) (lasts ??= new Map()).set(`${rank}\0${principal}`, tags[tags.length - 1]!);
    from = to;
  }
  return places;
}

/**
 * Leases up to `limit` due, unleased `queued` messages to `owner`, in fair order, and returns
 * their records. Runs inside the caller's transaction.
 */
export function claimDueMessages(s: ClaimStatements & ClaimReads, options: ClaimOptions): MessageRecord[] {
  wakeDueRetries(s, options.now);
  // Keys first, then each message row by id: the queue rows are written, the message rows
  // (one page per principal in the claim) only read.
  const keys = s.dueMessages.all({ now: options.now, limit: Math.max(0, options.limit) });
  const leaseUntil = options.now + options.leaseMs;
  const claimed: MessageRecord[] = [];
  for (const key of keys) {
    const row = s.messageById.get(key[2]);
    if (row === undefined || row.state !== 'queued') {
      // A queue row outlives its message's `queued` state only in a database changed by
      // hand (every step that moves a message on takes its queue row out): dropped, not
      // handed out.
      s.dequeue[0].run(...key);
      continue;
    }
    // Its validity ended: never handed out, but left for expireUnsent to end (lifecycle/timing.ts).
    if (validityElapsed(row.valid_until, options.now)) continue;
    s.leaseMessage.run(options.owner, leaseUntil, ...key);
    // No report to read: one is created only in the step that makes its message
    // terminal (terminate), and a terminal message is never queued again, so a
    // claimed (queued) message has none.
    claimed.push(messageRecord(row, partsOf(row), null));
  }
  return claimed;
}

/**
 * Leases up to `limit` due pending delivery reports to `owner`, the earliest due first, and
 * returns each with its message's record. Runs inside the caller's transaction.
 */
export function claimDueCallbacks(s: ClaimStatements & ClaimReads, options: ClaimOptions): DueCallback[] {
  const rows = s.dueCallbacks.all({ now: options.now, limit: Math.max(0, options.limit) });
  const leaseUntil = options.now + options.leaseMs;
  return rows.map((callback): DueCallback => {
    s.leaseCallback.run(options.owner, leaseUntil, callback.id);
    return { uid: callback.uid, attempts: callback.attempts, message: loadRecord(s, s.messageById.get(callback.message_id)!) };
  });
}
