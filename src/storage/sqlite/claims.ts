/**
 * What a claim takes, in SQLite: the statements that pick due `queued` messages for the
 * submit worker and due pending delivery reports for the report dispatcher, and the steps
 * that lease them. The order in which work is handed out is decided here and nowhere else,
 * so a change to that order (which messages go first, how much each key gets) is a change
 * to this file.
 *
 * Every `LIMIT` of a bound value is written `LIMIT +?` (see statements.ts).
 *
 * @module
 */
import type Database from 'better-sqlite3';
import {
  loadRecord,
  messageRecord,
  partsOf,
  type CallbackRow,
  type MessageRow,
  type ReportReads,
  type RowReader,
} from './rows.js';
import type { ClaimOptions, DueCallback, MessageRecord } from '../contract.js';

/** The claims' own statements; `@now` and `@limit` are the claim's time and how many it takes at most. */
export interface ClaimStatements {
  /** Ids of due, unleased `queued` messages, oldest first (the order of `sms_messages_claim`). */
  dueMessages: Database.Statement<{ now: number; limit: number }, { id: number }>;
  /** Leases message `id` to an owner until a time. */
  leaseMessage: Database.Statement<[string, number, number]>;
  /** Due, unleased pending reports, the earliest due first (the order of `sms_callbacks_due`). */
  dueCallbacks: Database.Statement<{ now: number; limit: number }, CallbackRow>;
  /** Leases report `id` to an owner until a time. */
  leaseCallback: Database.Statement<[string, number, number]>;
}

/** Prepares the claims' statements on `db`, with the others (statements.ts) when the schema is ready. */
export function prepareClaimStatements(db: Database.Database): ClaimStatements {
  return {
    dueMessages: db.prepare<{ now: number; limit: number }, { id: number }>(`
      SELECT id FROM sms_messages
      WHERE state = 'queued' AND next_attempt_at <= @now AND (lease_until IS NULL OR lease_until <= @now)
      ORDER BY created_at, id LIMIT +@limit`),
    leaseMessage: db.prepare<[string, number, number]>(
      'UPDATE sms_messages SET lease_owner = ?, lease_until = ? WHERE id = ?',
    ),
    dueCallbacks: db.prepare<{ now: number; limit: number }, CallbackRow>(`
      SELECT * FROM sms_callbacks
      WHERE state = 'pending' AND next_attempt_at <= @now AND (lease_until IS NULL OR lease_until <= @now)
      ORDER BY next_attempt_at, id LIMIT +@limit`),
    leaseCallback: db.prepare<[string, number, number]>(
      'UPDATE sms_callbacks SET lease_owner = ?, lease_until = ? WHERE id = ?',
    ),
  };
}

/** What the claims read besides their own statements: a message row by id, and its report. */
export interface ClaimReads extends ReportReads {
  /** The message row with this id. */
  messageById: RowReader<[number], MessageRow>;
}

/**
 * Leases up to `limit` due, unleased `queued` messages to `owner`, oldest first, and returns
 * their records. Runs inside the caller's transaction.
 */
export function claimDueMessages(s: ClaimStatements & ClaimReads, options: ClaimOptions): MessageRecord[] {
  // Ids first, then each row by id: measured faster than `SELECT *` of the due rows
  // or one `UPDATE ... RETURNING *` (the scan passes every leased message ahead).
  const rows = s.dueMessages.all({ now: options.now, limit: Math.max(0, options.limit) });
  const leaseUntil = options.now + options.leaseMs;
  return rows.map(({ id }) => {
    s.leaseMessage.run(options.owner, leaseUntil, id);
    // No report to read: one is created only in the step that makes its message
    // terminal (terminate), and a terminal message is never queued again, so a
    // claimed (queued) message has none.
    const row = s.messageById.get(id)!;
    return messageRecord(row, partsOf(row), null);
  });
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
