/**
 * The time-aware steps of the PostgreSQL storage (storage/lifecycle/timing.ts): the schema they need,
 * the statement that stores a request's times with its messages, and the stored functions
 * that queue the scheduled messages that are due, end the queued ones whose validity ended,
 * and cancel. A scheduled message is out of the claim index (`state = 'queued'`) until it is
 * due: it then gets its fair tag from `fair_starts` (claims.ts) as of that moment, so a
 * campaign scheduled for 9:00 takes turns with the queues of 9:00, not of when it was sent.
 *
 * @module
 */
import { CANCEL_LEASE_GRACE_MS } from '../../lifecycle/timing.js';
import { isScheduled } from '../queued-record.js';
import { IN_INDEX_ORDER, plpgsqlFunction, type FunctionScope, type StoredFunction } from './function-parts.js';
import type { FunctionNames, PostgresTables } from './names.js';
import type { InsertRows } from './rows.js';

/** The statements of the schema's migration for the time-aware steps, in schema `s`. */
export function timedMigration(s: string): string[] {
  return [
    `ALTER TABLE ${s}.messages ADD COLUMN send_at bigint`,
    `ALTER TABLE ${s}.messages ADD COLUMN valid_until bigint`,
    `ALTER TABLE ${s}.messages ADD COLUMN weight double precision`,
    `CREATE INDEX messages_scheduled_idx ON ${s}.messages (send_at, seq) WHERE state = 'scheduled'`,
    `CREATE INDEX messages_stale_idx ON ${s}.messages (valid_until, seq) WHERE valid_until IS NOT NULL AND state = 'queued'`,
  ];
}

/** Whether a call of an insert has a message with a time to store. */
export function hasTimes(call: InsertRows): boolean {
  return call.messages.some((m) => isScheduled(m) || (m.validUntil ?? null) !== null);
}

/** The SQL of the time-aware steps; `$n` are each one's parameters, in order. */
export interface TimedStatements {
  /**
   * The times of just-inserted messages: `$1` refs, `$2` due times (null: at once), `$3`
   * validity ends, `$4` weights. A due time makes the message `scheduled`, out of the claims.
   */
  storeTimes: string;
  /** `promote_scheduled($1 now, $2 limit, $3 reason, $4 description, $5 uids) AS result` */
  promote: string;
  /** `expire_unsent($1 now, $2 limit, $3 reason, $4 description, $5 uids) AS result` */
  expire: string;
  /** `cancel_messages($1 principal, $2 refs, $3 now, grace, $4 reason, $5 description, $6 uids) AS result` */
  cancel: string;
}

/** The statements of the time-aware steps over tables `t`, calling the functions `f`. */
export function timedStatements(t: PostgresTables, f: FunctionNames): TimedStatements {
  return {
    storeTimes: `UPDATE ${t.messages} m SET state = CASE WHEN x.send_at IS NULL THEN m.state ELSE 'scheduled' END,
        send_at = x.send_at, valid_until = x.valid_until, weight = x.weight
      FROM unnest($1::text[], $2::int8[], $3::int8[], $4::float8[]) AS x(ref, send_at, valid_until, weight)
      WHERE m.ref = x.ref`,
    promote: `SELECT ${f.promoteScheduled}($1::int8, $2::int8, $3::text, $4::text, $5::text[]) AS result`,
    expire: `SELECT ${f.expireUnsent}($1::int8, $2::int8, $3::text, $4::text, $5::text[]) AS result`,
    cancel: `SELECT ${f.cancelMessages}($1::text, $2::text[], $3::int8, ${CANCEL_LEASE_GRACE_MS}, $4::text, $5::text, $6::text[]) AS result`,
  };
}

/** {@link timedStatements}' parameters for `storeTimes`: the messages of `calls` that have times. */
export function timesParams(calls: readonly InsertRows[]): unknown[][] {
  const columns: unknown[][] = [[], [], [], []];
  for (const call of calls) {
    for (const m of call.messages) {
      const sendAt = isScheduled(m) ? m.sendAt! : null;
      const validUntil = m.validUntil ?? null;
      if (sendAt === null && validUntil === null) continue;
      const weight = typeof m.weight === 'number' && Number.isFinite(m.weight) && m.weight > 0 ? m.weight : 1;
      [m.ref, sendAt, validUntil, weight].forEach((value, i) => columns[i]!.push(value));
    }
  }
  return columns;
}

/**
 * The time-aware functions. Each locks what it changes (`FOR UPDATE`; the sweeps `SKIP
 * LOCKED`, so two instances never move one message twice) and ends messages through the
 * shared `terminate`, so their reports are stored in the same step.
 */
export function timedFunctions(scope: FunctionScope): StoredFunction[] {
  const { t, terminate, record, names } = scope;
  return [
    // The due scheduled messages, earliest first: each queued at the tag fair_starts gives
    // its principal and class now (one at a time, so the next sees it as its principal's
    // tail), or ended expired (p_reason) when its validity ended before it was queued.
    plpgsqlFunction(
      'promote_scheduled',
      names.promoteScheduled,
      'p_now bigint, p_limit bigint, p_reason text, p_description text, p_uids text[]',
      `
DECLARE
  v_row record;
  v_out json[] := '{}';
  v_start double precision;
  v_i integer := 0;
BEGIN
  FOR v_row IN
    SELECT ref, principal_id, priority, coalesce(weight, 1) AS weight, valid_until FROM ${t.messages}
    WHERE state = 'scheduled' AND send_at <= p_now ORDER BY send_at, seq LIMIT p_limit FOR UPDATE SKIP LOCKED
  LOOP
    v_i := v_i + 1;
    IF v_row.valid_until IS NOT NULL AND v_row.valid_until <= p_now THEN
      v_out := array_append(v_out,
        ${terminate}(v_row.ref, 'scheduled', 'expired', p_reason, p_description, p_now, p_uids[v_i], NULL, NULL, NULL));
    ELSE
      v_start := (${names.fairStarts}(ARRAY[v_row.principal_id], ARRAY[v_row.priority]::smallint[],
        ARRAY[v_row.weight]::double precision[], p_now))[1];
      UPDATE ${t.messages} SET state = 'queued', fair_tag = v_start + 1 / v_row.weight, next_attempt_at = p_now,
        updated_at = p_now
      WHERE ref = v_row.ref;
      v_out := array_append(v_out, json_build_object('previousState', 'scheduled', 'message', ${record('v_row.ref')}));
    END IF;
  END LOOP;
  RETURN array_to_json(v_out);
END
`,
      IN_INDEX_ORDER,
    ),

    // The queued messages whose validity ended and that no live lease holds, oldest end first.
    plpgsqlFunction(
      'expire_unsent',
      names.expireUnsent,
      'p_now bigint, p_limit bigint, p_reason text, p_description text, p_uids text[]',
      `
DECLARE
  v_refs text[];
  v_out json[] := '{}';
BEGIN
  SELECT coalesce(array_agg(o.ref ORDER BY o.valid_until, o.seq), '{}') INTO v_refs
  FROM (
    SELECT ref, valid_until, seq FROM ${t.messages}
    WHERE valid_until IS NOT NULL AND state = 'queued' AND valid_until <= p_now
      AND (lease_until IS NULL OR lease_until <= p_now)
    ORDER BY valid_until, seq LIMIT p_limit FOR UPDATE SKIP LOCKED
  ) o;
  FOR i IN 1 .. cardinality(v_refs) LOOP
    v_out := array_append(v_out,
      ${terminate}(v_refs[i], 'queued', 'expired', p_reason, p_description, p_now, p_uids[i], NULL, NULL, NULL));
  END LOOP;
  RETURN array_to_json(v_out);
END
`,
      IN_INDEX_ORDER,
    ),

    // Each ref (sorted by the caller, so two cancels lock in one order) of the principal's:
    // locked, waiting for a claim or a recording that holds it, then cancelled when it is
    // scheduled, or queued with no part submitted and no lease within p_grace of now.
    plpgsqlFunction(
      'cancel_messages',
      names.cancelMessages,
      'p_principal text, p_refs text[], p_now bigint, p_grace bigint, p_reason text, p_description text, p_uids text[]',
      `
DECLARE
  v_state text;
  v_lease bigint;
  v_parts jsonb;
  v_cancelled json[] := '{}';
  v_not json[] := '{}';
BEGIN
  FOR i IN 1 .. coalesce(cardinality(p_refs), 0) LOOP
    SELECT state, lease_until, parts INTO v_state, v_lease, v_parts FROM ${t.messages}
    WHERE ref = p_refs[i] AND principal_id = p_principal FOR UPDATE;
    CONTINUE WHEN NOT FOUND;
    IF v_state = 'scheduled' OR (v_state = 'queued' AND (v_lease IS NULL OR v_lease + p_grace <= p_now)
        AND NOT jsonb_path_exists(v_parts, 'strict $[*] ? (@[0] != null)')) THEN
      v_cancelled := array_append(v_cancelled,
        ${terminate}(p_refs[i], v_state, 'cancelled', p_reason, p_description, p_now, p_uids[i], NULL, NULL, NULL));
    ELSE
      v_not := array_append(v_not, json_build_object('ref', p_refs[i], 'state', v_state));
    END IF;
  END LOOP;
  RETURN json_build_object('cancelled', array_to_json(v_cancelled), 'notCancelled', array_to_json(v_not));
END
`,
    ),
  ];
}
