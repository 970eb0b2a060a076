/**
 * The SQL text of every statement the PostgreSQL storage runs for the contract's steps
 * (the migrations' own statements are in migrations.ts). Built once per storage from its
 * schema's names, so each method only picks its text and passes its parameters, and the
 * SQL of one step reads as a whole here rather than between the lines of the class. Every
 * step is one statement, so one round trip: those that need several are calls of the
 * stored functions (functions.ts).
 *
 * @module
 */
import { claimStatements, FAIR_TAG, type ClaimStatements } from './claims.js';
import type { FunctionNames, PostgresTables } from './names.js';
import { RECORD_SELECT } from './rows.js';
import { timedStatements, type TimedStatements } from './timed.js';

/**
 * "The report is still pending", for statements that name their reports by uid. Written as
 * not delivered and not failed rather than `state = 'pending'`, which the planner matches to
 * the pending reports' partial index: believing few reports pending (the statistics of a
 * new table), it would read every pending report for each statement rather than probe the
 * primary key for the uids (11 ms for a batch of 64 attempts with 20,000 reports pending,
 * against 1.6 ms by the uids).
 */
const UNFINISHED_REPORT = "state NOT IN ('delivered', 'failed')";

/** The statements of {@link postgresStatements}; `$n` are each one's parameters, in order. */
export interface PostgresStatements extends ClaimStatements, TimedStatements {
  /**
   * Inserts messages as `queued`, from one array per column and the groups of their fair
   * tags (rows.ts `insertParams`), each with its class's rank and its fair tag (claims.ts):
   * one statement, so atomic without an explicit transaction, and one round trip however
   * many messages it carries.
   */
  insertMessages: string;
  /**
   * {@link insertMessages} with idempotency records (`$28`-`$35`, idempotency.ts): messages
   * whose key another record holds are left out; returns the `principals` and `keys` taken.
   */
  insertMessagesKeyed: string;
  /** Principal `$1`'s idempotency record under key `$2` while live at `$3`. */
  findIdempotency: string;
  /** Deletes up to `$2` idempotency records expired at `$1`, oldest expiry first. */
  purgeIdempotency: string;
  /** `record_submission($1 ref, $2 idx, $3 carrier id, $4 now) AS result` */
  recordSubmission: string;
  /** `record_submissions` of four arrays, one element per call `AS result` */
  recordSubmissions: string;
  /** Gives message `$1` back to the queue with error `$2`, due at `$3`, changed at `$4`. */
  reschedule: string;
  /** `finish($1 ref, $2 state, $3 reason, $4 description, $5 now, $6 report uid) AS result` */
  finish: string;
  /** `expire_overdue($1 before, $2 limit, $3 state, $4 reason, $5 description, $6 now, $7 uids) AS result` */
  expireOverdue: string;
  /** `apply_receipt($1 spellings, $2-$4 outcome, $5 now, $6 report uid, $7 lease owner, $8 lease end) AS result` */
  applyReceipt: string;
  /** `apply_receipts` of the same, an array each (the spellings as a json array of arrays) `AS result` */
  applyReceipts: string;
  /** The record of message `$2` if principal `$1` owns it. */
  getMessage: string;
  /** Principal `$1`'s records with external id `$2`, newest first, at most `$3`. */
  findByExternalId: string;
  /** Makes the pending reports `$2` claimable again at `$1`. */
  deferCallbacks: string;
  /**
   * Records one attempt for each report of `$1` (uids), from status codes `$2`, errors `$3`,
   * next states `$4` and next attempt times `$5`, ending their leases; a finished report is
   * left as it is. A uid appears at most once (one attempt of a report runs at a time).
   */
  recordCallbackAttempts: string;
  /**
   * Deletes up to `$3` messages in states `$1` changed before `$2` that have no pending
   * report, with their carrier ids and finished report; its row count is the messages'.
   */
  purge: string;
  /**
   * The queued messages by class (`priority`, `n` and the `oldest` created_at of each rank
   * queued; no row for a class with none), of everyone; {@link countQueuedOf} for one
   * principal.
   */
  countQueued: string;
  /** {@link countQueued} for principal `$1`. */
  countQueuedOf: string;
}

/**
 * `countQueued`: the queued messages (leased and retrying ones included: their state is
 * `queued` until submitted or ended) grouped by class, with the oldest acceptance time.
 * Both read messages_principal_queued_idx alone (index-only where the visibility map allows),
 * which carries `created_at` since migration 6: the whole index for everyone, the
 * principal's range for one. Two texts rather than `$1 IS NULL OR ...`, which a generic plan
 * could not turn into the principal's range.
 */
function countQueuedSql(t: PostgresTables, ofPrincipal: boolean): string {
  return `SELECT priority, count(*) AS n, min(created_at) AS oldest FROM ${t.messages}
      WHERE state = 'queued'${ofPrincipal ? ' AND principal_id = $1' : ''}
      GROUP BY priority`;
}

/**
 * `insertMessages`, or with `keyed` `insertMessagesKeyed`: the start of each group's tags
 * (claims.ts), once, then the rows with their tags; `ORDER BY ord` gives them their seq in
 * the calls' order. Keyed, the idempotency records (`$28`-`$34`, one element per record: see
 * idempotency.ts) are written first, each taking its key or replacing an expired record under
 * it; a key held by a live record writes nothing (ON CONFLICT waits for a writer of that key
 * still in flight, then sees its commit), and the messages whose key (`$35`, one per message,
 * null for none) was not taken are left out. The statement returns the keys it took.
 */
function insertMessagesSql(t: PostgresTables, f: FunctionNames, keyed: boolean): string {
  const records = `k AS (
        INSERT INTO ${t.idempotencyKeys} AS i (principal_id, key, body_hash, status, body, created_at, expires_at)
        SELECT * FROM unnest($28::text[], $29::text[], $30::text[], $31::int4[], $32::text[], $33::int8[], $34::int8[])
        ON CONFLICT (principal_id, key) DO UPDATE SET body_hash = EXCLUDED.body_hash, status = EXCLUDED.status,
          body = EXCLUDED.body, created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
        WHERE i.expires_at <= EXCLUDED.created_at
        RETURNING i.principal_id, i.key
      ),`;
  const insert = `INSERT INTO ${t.messages} (ref, principal_id, endpoint, profile_code, sender, recipient, text,
        message_type, req_type, external_id, recipient_field, reference_field, sms_count, encoding,
        callback_url, callback_secret, created_at, state, attempts, next_attempt_at, lease_owner, lease_until,
        updated_at, parts, priority, fair_tag)
      SELECT t.ref, t.principal_id, t.endpoint, t.profile_code, t.sender, t.recipient, t.text, t.message_type,
        t.req_type, t.external_id, t.recipient_field, t.reference_field, t.sms_count, t.encoding, t.callback_url,
        t.callback_secret, t.created_at, 'queued', 0, t.created_at, t.lease_owner, t.lease_until, t.created_at,
        t.parts, t.priority, ${FAIR_TAG}
      FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
        $8::int4[], $9::int4[], $10::text[], $11::text[], $12::text[], $13::int4[], $14::text[], $15::text[],
        $16::text[], $17::int8[], $18::text[], $19::int8[], $20::jsonb[], $21::int2[], $22::int4[], $23::float8[]${keyed ? ', $35::text[]' : ''})
        WITH ORDINALITY AS t(ref, principal_id, endpoint, profile_code, sender, recipient, text, message_type,
          req_type, external_id, recipient_field, reference_field, sms_count, encoding, callback_url,
          callback_secret, created_at, lease_owner, lease_until, parts, priority, grp, tag_offset,${keyed ? ' idem_key,' : ''} ord)
      CROSS JOIN s${keyed ? '\n      WHERE t.idem_key IS NULL OR EXISTS (SELECT 1 FROM k WHERE k.principal_id = t.principal_id AND k.key = t.idem_key)' : ''}
      ORDER BY ord`;
  const starts = `WITH s AS MATERIALIZED (
        SELECT ${f.fairStarts}($24::text[], $25::int2[], $26::float8[], $27::int8) AS starts
      ),`;
  if (!keyed) return `${starts.slice(0, -1)}\n      ${insert}`;
  return `${starts}
      ${records}
      m AS (${insert})
      SELECT array(SELECT principal_id FROM k) AS principals, array(SELECT key FROM k) AS keys`;
}

/** The statements over tables `t`, calling the functions `f`. */
export function postgresStatements(t: PostgresTables, f: FunctionNames): PostgresStatements {
  return {
    ...claimStatements(t, f),
    ...timedStatements(t, f),
    insertMessages: insertMessagesSql(t, f, false),
    insertMessagesKeyed: insertMessagesSql(t, f, true),
    recordSubmission: `SELECT ${f.recordSubmission}($1::text, $2::int4, $3::text, $4::int8) AS result`,
    recordSubmissions: `SELECT ${f.recordSubmissions}($1::text[], $2::int4[], $3::text[], $4::int8[]) AS result`,
    reschedule: `UPDATE ${t.messages} SET attempts = attempts + 1, last_error = $2, next_attempt_at = $3,
        lease_owner = NULL, lease_until = NULL, updated_at = $4
      WHERE ref = $1 AND state = 'queued'`,
    finish: `SELECT ${f.finish}($1::text, $2::text, $3::text, $4::text, $5::int8, $6::text) AS result`,
    expireOverdue: `SELECT ${f.expireOverdue}($1::int8, $2::int8, $3::text, $4::text, $5::text, $6::int8, $7::text[]) AS result`,
    applyReceipt: `SELECT ${f.applyReceipt}($1::text[], $2::text, $3::text, $4::text, $5::int8, $6::text, $7::text, $8::int8) AS result`,
    applyReceipts: `SELECT ${f.applyReceipts}($1::json, $2::text[], $3::text[], $4::text[], $5::int8[], $6::text[], $7::text[], $8::int8[]) AS result`,
    getMessage: `${RECORD_SELECT}
      FROM ${t.messages} m LEFT JOIN ${t.callbacks} c ON c.ref = m.ref
      WHERE m.ref = $2 AND m.principal_id = $1`,
    findByExternalId: `${RECORD_SELECT}
      FROM ${t.messages} m LEFT JOIN ${t.callbacks} c ON c.ref = m.ref
      WHERE m.principal_id = $1 AND m.external_id = $2
      ORDER BY m.created_at DESC, m.seq DESC
      LIMIT $3`,
    deferCallbacks: `UPDATE ${t.callbacks} SET lease_until = $1 WHERE uid = ANY($2::text[]) AND ${UNFINISHED_REPORT}`,
    // The reports are found by their uids (`uid = ANY`: one primary-key probe each); see
    // UNFINISHED_REPORT for why the state is not tested as `= 'pending'`.
    recordCallbackAttempts: `UPDATE ${t.callbacks} c SET attempts = c.attempts + 1, last_status_code = a.status_code, last_error = a.error,
        state = a.state, next_attempt_at = a.next_attempt_at, lease_owner = NULL, lease_until = NULL
      FROM unnest($1::text[], $2::int[], $3::text[], $4::text[], $5::bigint[])
        AS a(uid, status_code, error, state, next_attempt_at)
      WHERE c.uid = ANY ($1::text[]) AND c.uid = a.uid AND c.${UNFINISHED_REPORT}`,
    // The message with its carrier ids and finished report, in one statement (every
    // data-modifying part of it runs, on the same locked rows).
    purge: `WITH doomed AS (
        SELECT m.ref FROM ${t.messages} m
        WHERE m.state = ANY($1::text[]) AND m.updated_at < $2
          AND NOT EXISTS (SELECT 1 FROM ${t.callbacks} c WHERE c.ref = m.ref AND c.state = 'pending')
        ORDER BY m.updated_at, m.seq
        LIMIT $3
        FOR UPDATE SKIP LOCKED
      ),
      carrier_ids AS (DELETE FROM ${t.carrierIds} WHERE ref IN (SELECT ref FROM doomed)),
      callbacks AS (DELETE FROM ${t.callbacks} WHERE ref IN (SELECT ref FROM doomed))
      DELETE FROM ${t.messages} WHERE ref IN (SELECT ref FROM doomed)`,
    findIdempotency: `SELECT body_hash, status, body, created_at, expires_at FROM ${t.idempotencyKeys}
      WHERE principal_id = $1 AND key = $2 AND expires_at > $3`,
    purgeIdempotency: `DELETE FROM ${t.idempotencyKeys} WHERE (principal_id, key) IN (
        SELECT principal_id, key FROM ${t.idempotencyKeys} WHERE expires_at <= $1
        ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED)`,
    countQueued: countQueuedSql(t, false),
    countQueuedOf: countQueuedSql(t, true),
  };
}
