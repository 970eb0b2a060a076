/**
 * The SQL text of every statement the SQLite storage runs for the contract's steps (the
 * migrations' own are in migrations.ts, the claims' in claims.ts). Prepared once, when the
 * schema is ready, so each step only picks its statements and binds its parameters, and the
 * SQL of one step reads as a whole here rather than between the lines of the class.
 *
 * Every `LIMIT` of a bound value is written `LIMIT +?`: SQLite reads the value of a bare
 * `LIMIT ?` while planning, and then plans the statement again each time the value is bound,
 * so each run would be parsed and planned anew: 25 us a claim rather than 4 us. The
 * unary plus makes it an expression the planner does not read; the results are the same.
 *
 * @module
 */
import type Database from 'better-sqlite3';
import { prepareClaimStatements, type ClaimReads, type ClaimStatements, type QueueKey } from './claims.js';
import { PURGEABLE_SQL } from './migrations.js';
import { prepareTimedStatements, type TimedStatements } from './timed.js';
import { MESSAGE_COLUMNS, readRows, toMessageRow, type CallbackRow, type MessageRow, type RowReader } from './rows.js';

/**
 * The prepared statements, by the step that runs them; `?` are each one's parameters, in
 * order. The message reads return rows converted by rows.ts.
 */
export interface Statements extends ClaimStatements, ClaimReads, TimedStatements {
  /** Inserts a message as `queued` in its class at its fair tag, from rows.ts `insertParams` (its queue row: claims.ts). */
  insertMessage: Database.Statement<[unknown[]]>;
  /** The message row with this ref. */
  messageByRef: RowReader<[string], MessageRow>;
  /** Where a carrier id points: its message's id and part index (indexed, or moved if seen before). */
  indexCarrierId: Database.Statement<[string, number, number]>;
  /** A message's last part was submitted: `submitted`, its parts, its time (its queue row goes: claims.ts `dequeue`). */
  markSubmitted: Database.Statement<[string, number, number]>;
  /** A part changed while its message stays where it is (more parts to come). */
  setPartsTouched: Database.Statement<[string, number, number]>;
  /** A part changed after its message moved on (a late submission or receipt): the message's time stays. */
  setParts: Database.Statement<[string, number]>;
  /**
   * A `queued` message's failed attempt: counted, its error, its next time; returns its queue
   * key, for its queue row's due time and lease (claims.ts `requeue`), or nothing if not queued.
   */
  reschedule: Database.Statement<[string, number, number, string], QueueKey>;
  /** A message's end: its outcome, parts and time (its queue row, if queued, goes: claims.ts `dequeue`). */
  terminate: Database.Statement<[string, string, string, string, number, number]>;
  /** A message's pending report, leased if an owner and time are given. */
  insertCallback: Database.Statement<[string, number, number, string | null, number | null]>;
  /** The message id and part index a carrier id names. */
  carrierIdAddress: Database.Statement<[string], { message_id: number; idx: number }>;
  /** A principal's message rows with an external id, newest first. */
  byExternalId: RowReader<[string, string, number], MessageRow>;
  /** Makes a pending report claimable again at a time. */
  deferCallback: Database.Statement<[number, string]>;
  /** A report's attempt: its new state, status code, error and next time; its lease ends. */
  recordCallbackAttempt: Database.Statement<[string, number | null, string | null, number | null, string]>;
  /** `submitted` message rows unchanged since before a time, oldest first. */
  overdue: RowReader<[number, number], MessageRow>;
  /** Ids of terminal messages changed before a time with no pending report, oldest first. */
  purgeable: Database.Statement<[number, number], { id: number }>;
  /** Deletes a message's carrier ids. */
  deleteCarrierIds: Database.Statement<[number]>;
  /** Deletes a message's report. */
  deleteCallback: Database.Statement<[number]>;
  /** Deletes a message. */
  deleteMessage: Database.Statement<[number]>;
  /**
   * The queued messages of everyone (leased and retrying ones included: every queued message
   * has its one row in `sms_queue`), by class: `[rank, count, oldest created_at]`, a row per
   * `retrying` and rank that has any (up to four: the caller adds them up).
   */
  countQueued: Database.Statement<[], QueueCountRow>;
  /** {@link Statements.countQueued} for one principal: a row per rank it has queued. */
  countQueuedOf: Database.Statement<[string], QueueCountRow>;
  /**
   * Takes a principal's idempotency key (principal, key, body hash, status, body, created at,
   * expires at): inserts the record, or replaces one expired at its creation; changes no row
   * when the key is held by a live record.
   */
  takeIdempotencyKey: Database.Statement<[string, string, string, number, string, number, number]>;
  /** A principal's record under a key while live at a time. */
  idempotencyRecord: Database.Statement<[string, string, number], IdempotencyRow>;
  /** Deletes up to a number of records expired at a time, oldest expiry first. */
  purgeIdempotency: Database.Statement<[number, number]>;
}

/** A row of `sms_idempotency`. */
export interface IdempotencyRow {
  principal_id: string;
  key: string;
  body_hash: string;
  status: number;
  body: string;
  created_at: number;
  expires_at: number;
}

/** A row of the queue count: a class's rank, how many of it are queued, and the oldest one's acceptance time. */
export type QueueCountRow = [rank: number, count: number, oldest: number];

/** Prepares every statement of the storage on `db`, whose schema is up to date. */
export function prepareStatements(db: Database.Database): Statements {
  return {
    ...prepareClaimStatements(db),
    ...prepareTimedStatements(db),
    insertMessage: db.prepare<[unknown[]]>(`
      INSERT INTO sms_messages (ref, principal_id, endpoint, profile_code, sender, recipient, text,
        message_type, req_type, external_id, recipient_field, reference_field, sms_count, encoding,
        callback_url, callback_secret, created_at, state, attempts, next_attempt_at, updated_at, parts, priority, fair_tag)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'queued', 0, ?, ?, ?, ?, ?)`),
    messageByRef: readRows(db.prepare<[string], unknown[]>(`SELECT ${MESSAGE_COLUMNS} FROM sms_messages WHERE ref = ?`), toMessageRow),
    messageById: readRows(db.prepare<[number], unknown[]>(`SELECT ${MESSAGE_COLUMNS} FROM sms_messages WHERE id = ?`), toMessageRow),
    callbackOfMessage: db.prepare<[number], CallbackRow>('SELECT * FROM sms_callbacks WHERE message_id = ?'),
    indexCarrierId: db.prepare<[string, number, number]>(`
      INSERT INTO sms_carrier_ids (carrier_id, message_id, idx) VALUES (?, ?, ?)
      ON CONFLICT (carrier_id) DO UPDATE SET message_id = excluded.message_id, idx = excluded.idx`),
    markSubmitted: db.prepare<[string, number, number]>(
      `UPDATE sms_messages SET state = 'submitted', parts = ?, updated_at = ? WHERE id = ?`,
    ),
    setPartsTouched: db.prepare<[string, number, number]>('UPDATE sms_messages SET parts = ?, updated_at = ? WHERE id = ?'),
    setParts: db.prepare<[string, number]>('UPDATE sms_messages SET parts = ? WHERE id = ?'),
    reschedule: db
      .prepare<[string, number, number, string], QueueKey>(`
        UPDATE sms_messages SET attempts = attempts + 1, last_error = ?, next_attempt_at = ?, updated_at = ?
        WHERE ref = ? AND state = 'queued' RETURNING priority, fair_tag, id`)
      .raw(true),
    terminate: db.prepare<[string, string, string, string, number, number]>(`
      UPDATE sms_messages SET state = ?, status_reason = ?, status_description = ?, parts = ?, updated_at = ?
      WHERE id = ?`),
    insertCallback: db.prepare<[string, number, number, string | null, number | null]>(`
      INSERT INTO sms_callbacks (uid, message_id, state, attempts, next_attempt_at, lease_owner, lease_until)
      VALUES (?, ?, 'pending', 0, ?, ?, ?)`),
    carrierIdAddress: db.prepare<[string], { message_id: number; idx: number }>(
      'SELECT message_id, idx FROM sms_carrier_ids WHERE carrier_id = ?',
    ),
    byExternalId: readRows(
      db.prepare<[string, string, number], unknown[]>(`
        SELECT ${MESSAGE_COLUMNS} FROM sms_messages WHERE principal_id = ? AND external_id = ?
        ORDER BY created_at DESC, id DESC LIMIT +?`),
      toMessageRow,
    ),
    deferCallback: db.prepare<[number, string]>(
      `UPDATE sms_callbacks SET lease_until = ? WHERE uid = ? AND state = 'pending'`,
    ),
    recordCallbackAttempt: db.prepare<[string, number | null, string | null, number | null, string]>(`
      UPDATE sms_callbacks SET state = ?, attempts = attempts + 1, last_status_code = ?, last_error = ?,
        next_attempt_at = ?, lease_owner = NULL, lease_until = NULL
      WHERE uid = ? AND state = 'pending'`),
    overdue: readRows(
      db.prepare<[number, number], unknown[]>(`
        SELECT ${MESSAGE_COLUMNS} FROM sms_messages WHERE state = 'submitted' AND updated_at < ? ORDER BY updated_at, id LIMIT +?`),
      toMessageRow,
    ),
    purgeable: db.prepare<[number, number], { id: number }>(`
      SELECT m.id FROM sms_messages m
      WHERE ${PURGEABLE_SQL} AND m.state <> 'scheduled' AND m.updated_at < ?
        AND NOT EXISTS (SELECT 1 FROM sms_callbacks c WHERE c.message_id = m.id AND c.state = 'pending')
      ORDER BY m.updated_at, m.id LIMIT +?`),
    deleteCarrierIds: db.prepare<[number]>('DELETE FROM sms_carrier_ids WHERE message_id = ?'),
    deleteCallback: db.prepare<[number]>('DELETE FROM sms_callbacks WHERE message_id = ?'),
    deleteMessage: db.prepare<[number]>('DELETE FROM sms_messages WHERE id = ?'),
    // Both read `sms_queue` only, with each row's `created_at` (from migration 6): everyone's
    // is one pass over the table in its key's order (grouped by the key's first two columns,
    // so no sort), one principal's the covering range of `sms_queue_principal`, in rank order.
    // Two statements rather than `? IS NULL OR principal_id = ?`, which would not plan as the
    // principal's range.
    countQueued: db
      .prepare<[], QueueCountRow>(
        'SELECT priority, count(*), min(created_at) FROM sms_queue GROUP BY retrying, priority',
      )
      .raw(true),
    countQueuedOf: db
      .prepare<[string], QueueCountRow>(
        'SELECT priority, count(*), min(created_at) FROM sms_queue WHERE principal_id = ? GROUP BY priority',
      )
      .raw(true),
    takeIdempotencyKey: db.prepare<[string, string, string, number, string, number, number]>(`
      INSERT INTO sms_idempotency (principal_id, key, body_hash, status, body, created_at, expires_at)
      VALUES (?, ?, ?, ?, ?, ?, ?)
      ON CONFLICT (principal_id, key) DO UPDATE SET body_hash = excluded.body_hash, status = excluded.status,
        body = excluded.body, created_at = excluded.created_at, expires_at = excluded.expires_at
      WHERE sms_idempotency.expires_at <= excluded.created_at`),
    idempotencyRecord: db.prepare<[string, string, number], IdempotencyRow>(
      'SELECT * FROM sms_idempotency WHERE principal_id = ? AND key = ? AND expires_at > ?',
    ),
    purgeIdempotency: db.prepare<[number, number]>(`
      DELETE FROM sms_idempotency WHERE (principal_id, key) IN (
        SELECT principal_id, key FROM sms_idempotency WHERE expires_at <= ? ORDER BY expires_at LIMIT +?)`),
  };
}
