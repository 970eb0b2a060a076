/**
 * The time-aware steps of the SQLite storage (storage/lifecycle/timing.ts): storing a message's times,
 * queueing the scheduled messages that are due, finding the queued ones whose validity
 * ended, and deciding what a cancel may end. A scheduled message has no row in `sms_queue`
 * (claims.ts) until it is due: it then gets its fair place as if accepted at that moment, so
 * a campaign scheduled for 9:00 takes turns with the queues of 9:00, not of when it was sent.
 *
 * @module
 */
import type Database from 'better-sqlite3';
import { PRIORITY_RANK } from '../../lifecycle/fair-tags.js';
import { isScheduled } from '../queued-record.js';
import { CANCELLED, leaseBarsCancel, validityElapsed, VALIDITY_ELAPSED } from '../../lifecycle/timing.js';
import type { Outcome } from '../../lifecycle/states.js';
import type { GroupCommit } from './group-commit.js';
import { fairPlaces, queueKey, type ClaimStatements } from './claims.js';
import { messageRecord, partsOf, readRows, toMessageRow, MESSAGE_COLUMNS, type MessageRow, type RowReader } from './rows.js';
import type { CancelResult, NewMessage, Storage, Transition } from '../contract.js';

/** The time-aware steps' own statements. */
export interface TimedStatements {
  /** A just-stored message's times: state, due time, validity end, weight (for when it is due), then its id. */
  setTimes: Database.Statement<[string, number | null, number | null, number | null, number]>;
  /** `scheduled` message rows due at a time, earliest first, at most a number. */
  dueScheduled: RowReader<[number, number], MessageRow>;
  /** A scheduled message is due: `queued` at its fair tag, due now, at a time; its id. */
  queueScheduled: Database.Statement<[number, number, number, number]>;
  /** `queued` message rows whose validity ended at a time and that no live lease holds, oldest end first, at most a number. */
  staleQueued: RowReader<[number, number, number], MessageRow>;
  /** The weight a scheduled message was stored with (not a column of the records). */
  weightOf: Database.Statement<[number], number | null>;
  /** The lease end of a queued message's queue row (by its key, retrying or not), if leased. */
  queueLease: Database.Statement<[number, number, number], number | null>;
}

/** Prepares the time-aware statements on `db`, whose schema is up to date. */
export function prepareTimedStatements(db: Database.Database): TimedStatements {
  return {
    setTimes: db.prepare('UPDATE sms_messages SET state = ?, send_at = ?, valid_until = ?, weight = ? WHERE id = ?'),
    dueScheduled: readRows(
      db.prepare<[number, number], unknown[]>(`
        SELECT ${MESSAGE_COLUMNS} FROM sms_messages INDEXED BY sms_messages_scheduled
        WHERE state = 'scheduled' AND send_at <= ? ORDER BY send_at, id LIMIT +?`),
      toMessageRow,
    ),
    queueScheduled: db.prepare(
      `UPDATE sms_messages SET state = 'queued', fair_tag = ?, next_attempt_at = ?, updated_at = ? WHERE id = ?`,
    ),
    // The lease is the queue row's (claims.ts): found by the message's key, retrying or not.
    staleQueued: readRows(
      db.prepare<[number, number, number], unknown[]>(`
        SELECT ${MESSAGE_COLUMNS} FROM sms_messages m INDEXED BY sms_messages_stale
        WHERE m.valid_until IS NOT NULL AND m.state = 'queued' AND m.valid_until <= ?
          AND NOT EXISTS (SELECT 1 FROM sms_queue q WHERE q.retrying IN (0, 1) AND q.priority = m.priority
            AND q.fair_tag = m.fair_tag AND q.message_id = m.id AND q.lease_until > ?)
        ORDER BY m.valid_until, m.id LIMIT +?`),
      toMessageRow,
    ),
    weightOf: db.prepare<[number], number | null>('SELECT weight FROM sms_messages WHERE id = ?').pluck(),
    queueLease: db
      .prepare<[number, number, number], number | null>(
        'SELECT lease_until FROM sms_queue WHERE retrying IN (0, 1) AND priority = ? AND fair_tag = ? AND message_id = ?',
      )
      .pluck(),
  };
}

/**
 * Stores the times of message `m`, just inserted as row `id`; returns whether it is to be
 * queued now (else it is `scheduled`, and gets its queue row when due). A message without
 * times costs nothing more.
 */
export function storeTimes(s: TimedStatements, id: number, m: NewMessage): boolean {
  const scheduled = isScheduled(m);
  const validUntil = m.validUntil ?? null;
  if (!scheduled && validUntil === null) return true;
  s.setTimes.run(scheduled ? 'scheduled' : 'queued', scheduled ? m.sendAt! : null, validUntil, scheduled ? m.weight : null, id);
  return !scheduled;
}

/**
 * Queues up to `limit` scheduled messages due at `now`, each in its fair place as of `now`
 * (claims.ts `fairPlaces`, as an insert at `now` would place them), or ends through `expire`
 * those whose validity ended meanwhile. Runs inside the caller's transaction.
 */
export function promoteDue(
  s: TimedStatements & ClaimStatements,
  now: number,
  limit: number,
  expire: (row: MessageRow) => Transition,
): Transition[] {
  const rows = s.dueScheduled.all(now, Math.max(0, limit));
  const ended = rows.filter((row) => validityElapsed(row.valid_until, now)).map(expire);
  const due = rows.filter((row) => !validityElapsed(row.valid_until, now));
  const places = fairPlaces(
    s,
    due.map((row) => ({
      principalId: row.principal_id,
      priority: row.priority === PRIORITY_RANK.transactional ? 'transactional' : 'bulk',
      weight: s.weightOf.get(row.id) ?? 1,
      createdAt: now,
    })) as NewMessage[],
  );
  const queued = due.map((row, i): Transition => {
    const { rank, tag } = places[i]!;
    s.queueScheduled.run(tag, now, now, row.id);
    // Its wait in the queue starts now: the queue row's acceptance time is the due time.
    s.enqueue.run(rank, tag, row.id, row.principal_id, now, null, null, row.send_at ?? now);
    const updated: MessageRow = { ...row, state: 'queued', fair_tag: tag, next_attempt_at: now, updated_at: now };
    // A message not yet terminal has no report (claims.ts).
    return { message: messageRecord(updated, partsOf(updated), null), previousState: 'scheduled' };
  });
  return [...ended, ...queued];
}


/**
 * Ends through `cancel` each of the principal's `refs` that is scheduled, or queued with no
 * part submitted and no lease that keeps it (`leaseBarsCancel`); the others of the
 * principal's are reported with their state. Runs inside the caller's transaction, so the
 * decision and the end are one step: a claim or a submission's recording cannot come between.
 */
export function cancelRefs(
  s: TimedStatements & { messageByRef: RowReader<[string], MessageRow> },
  principalId: string,
  refs: readonly string[],
  now: number,
  cancel: (row: MessageRow) => Transition,
): CancelResult {
  const result: CancelResult = { cancelled: [], notCancelled: [] };
  for (const ref of new Set(refs)) {
    const row = s.messageByRef.get(ref);
    if (row === undefined || row.principal_id !== principalId) continue;
    if (cancellable(s, row, now)) result.cancelled.push(cancel(row));
    else result.notCancelled.push({ ref, state: row.state });
  }
  return result;
}

/** Whether message `row` may be cancelled at `now`. */
function cancellable(s: TimedStatements, row: MessageRow, now: number): boolean {
  if (row.state === 'scheduled') return true;
  if (row.state !== 'queued') return false;
  if (partsOf(row).some((part) => part.carrierId !== null)) return false;
  const [rank, tag, id] = queueKey(row);
  return !leaseBarsCancel(s.queueLease.get(rank, tag, id) ?? null, now);
}

/** The time-aware methods of the storage contract, as the SQLite storage has them. */
export type SqliteTimed = Required<Pick<Storage, 'promoteScheduled' | 'expireUnsent' | 'cancelMessages'>>;

/**
 * The SQLite storage's time-aware methods (set on it by its constructor), each one write in
 * the storage's group commit: `prepared` waits for its schema and gives its statements, and
 * `end` is its own step that ends a message (with its report).
 */
export function sqliteTimed<S extends TimedStatements & ClaimStatements & { messageByRef: RowReader<[string], MessageRow> }>(
  prepared: () => Promise<S>,
  commits: GroupCommit,
  end: (s: S, row: MessageRow, outcome: Outcome, now: number) => Transition,
): SqliteTimed {
  const step = async <T>(work: (s: S) => T): Promise<T> => {
    const s = await prepared();
    return commits.run(() => work(s));
  };
  return {
    promoteScheduled: (now, limit) => step((s) => promoteDue(s, now, limit, (row) => end(s, row, VALIDITY_ELAPSED, now))),
    expireUnsent: (now, limit) => step((s) => s.staleQueued.all(now, now, Math.max(0, limit)).map((row) => end(s, row, VALIDITY_ELAPSED, now))),
    cancelMessages: (principalId, refs, now) => step((s) => cancelRefs(s, principalId, refs, now, (row) => end(s, row, CANCELLED, now))),
  };
}
