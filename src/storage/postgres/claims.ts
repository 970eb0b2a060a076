/**
 * What a claim takes, in PostgreSQL: the statements that lease due messages to the submit
 * worker and due delivery reports to the report dispatcher, and the SQL functions
 * (`due_messages`, `due_callbacks`) that pick and lock them. The order in which work is
 * handed out is decided here and nowhere else, so a change to that order (which messages go
 * first, how much each key gets) is a change to this file.
 *
 * @module
 */
import { IN_INDEX_ORDER, TAG, type StoredFunction } from './function-parts.js';
import { storedName, type FunctionNames, type PostgresTables } from './names.js';
import { RECORD_SELECT } from './rows.js';

/**
 * A function returning the keys of the oldest `p_limit` due, unleased rows of `table` in
 * `state`, in the order of the partial index on that state, locked (`FOR UPDATE SKIP
 * LOCKED`: rows another instance is claiming are passed over).
 *
 * Why a function with its own planner settings rather than a subquery of the claim: a
 * planner that believes few rows are in that state (always, in a new schema until
 * autovacuum first analyzes it; and a steady gateway has next to none queued) reads them all
 * with a bitmap scan and sorts them, for every claim. During a backlog, which is when
 * claims run back to back, each claim would then cost the whole backlog (134 ms a claim at
 * 146,000 queued messages, against 0.2 ms reading the index in order and stopping at
 * `p_limit`). With bitmap and sequential scans off inside the function, reading the index
 * in order is the plan whatever the statistics say. (A function with `SET` options is never
 * inlined, so they hold.)
 *
 * `ROWS 1` (the planner's guess of how many keys it returns; the default is 1,000) is for
 * the claim around it: a claim costed at a thousand rows, each with its record query, can
 * pass PostgreSQL's `jit_above_cost` and be compiled to machine code before every run, which
 * costs far more than the claim itself. Costed at one row a claim stays far below the JIT
 * thresholds; the plan (a primary-key lookup per claimed key) is the right one for any
 * `p_limit` a claimer asks for.
 */
function dueSelection(
  name: string,
  qualified: string,
  select: { key: string; table: string; state: string; order: string },
): StoredFunction {
  const body = `
SELECT ${select.key} FROM ${select.table}
WHERE state = '${select.state}' AND next_attempt_at <= p_now AND (lease_until IS NULL OR lease_until <= p_now)
ORDER BY ${select.order}
LIMIT p_limit
FOR UPDATE SKIP LOCKED
`;
  return {
    name: storedName(name),
    body,
    create: `CREATE OR REPLACE FUNCTION ${qualified}(p_now bigint, p_limit bigint) RETURNS SETOF text LANGUAGE sql
      ROWS 1 ${IN_INDEX_ORDER} AS ${TAG}${body}${TAG}`,
  };
}

/** The functions that pick what a claim takes: `due_messages`, then `due_callbacks`. */
export function claimFunctions(t: PostgresTables, names: FunctionNames): StoredFunction[] {
  return [
    // Messages: queued ones, oldest first (the order of messages_queued_idx).
    dueSelection('due_messages', names.dueMessages, {
      key: 'ref',
      table: t.messages,
      state: 'queued',
      order: 'created_at, seq',
    }),
    // Reports: pending ones, the earliest due first (the order of callbacks_pending_idx).
    dueSelection('due_callbacks', names.dueCallbacks, {
      key: 'uid',
      table: t.callbacks,
      state: 'pending',
      order: 'next_attempt_at, seq',
    }),
  ];
}

/** The SQL of the two claims; both take `$1` owner, `$2` lease end, `$3` now, `$4` limit. */
export interface ClaimStatements {
  /** Leases the messages `due_messages` picks; their records, oldest first. */
  claimMessages: string;
  /** Leases the reports `due_callbacks` picks; each one's message record and `cb_uid`, earliest due first. */
  claimCallbacks: string;
}

/** The claim statements over tables `t`, calling the functions `f`. */
export function claimStatements(t: PostgresTables, f: FunctionNames): ClaimStatements {
  return {
    claimMessages: `WITH claimed AS (
        UPDATE ${t.messages} SET lease_owner = $1, lease_until = $2
        WHERE ref IN (SELECT * FROM ${f.dueMessages}($3, $4))
        RETURNING *
      )
      ${RECORD_SELECT}
      FROM claimed m LEFT JOIN ${t.callbacks} c ON c.ref = m.ref
      ORDER BY m.created_at, m.seq`,
    claimCallbacks: `WITH claimed AS (
        UPDATE ${t.callbacks} SET lease_owner = $1, lease_until = $2
        WHERE uid IN (SELECT * FROM ${f.dueCallbacks}($3, $4))
        RETURNING *
      )
      ${RECORD_SELECT}, c.uid AS cb_uid
      FROM claimed c JOIN ${t.messages} m ON m.ref = c.ref
      ORDER BY c.next_attempt_at, c.seq`,
  };
}
