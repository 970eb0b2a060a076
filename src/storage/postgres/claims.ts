/**
 * What a claim takes, in PostgreSQL: the statements that lease due messages to the submit
 * worker and due delivery reports to the report dispatcher, the SQL functions
 * (`due_messages`, `due_callbacks`) that pick and lock them, and what puts a message in its
 * place when it is stored (its class's rank and fair tag, {@link FAIR_TAG}). The order in
 * which work is handed out is decided here and nowhere else, so a change to that order
 * (which messages go first, how much each key gets) is a change to this file.
 *
 * The order is the contract's fair order (storage/contract.ts, `claimMessages`): by rank
 * (transactional first), then by fair tag (lifecycle/fair-tags.ts: principals in turn by
 * weight), then by `seq` (acceptance order; ties between principals). Both are fixed when a
 * message is stored, so a claim is one scan of `messages_queued_idx` (rank, fair_tag, seq)
 * in order, however many principals have messages queued, and a message given back for a
 * retry keeps its place.
 *
 * @module
 */
import { IN_INDEX_ORDER, TAG, type StoredFunction } from './function-parts.js';
import { storedName, type FunctionNames, type PostgresTables } from './names.js';
import { RECORD_SELECT } from './rows.js';

/** Due at `p_now` and not held by a live lease: what a claim may take. */
const CLAIMABLE = 'next_attempt_at <= p_now AND (lease_until IS NULL OR lease_until <= p_now)';

/** The claim order of queued messages: the order of `messages_queued_idx`. */
const FAIR_ORDER = 'priority, fair_tag, seq';

/**
 * A function returning the keys of the first `p_limit` due, unleased rows of `table` in
 * `state`, in the order of the partial index on that state (`order`), locked (`FOR UPDATE SKIP
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
  select: { key: string; table: string; state: string; order: string; also?: string },
): StoredFunction {
  const body = `
SELECT ${select.key} FROM ${select.table}
WHERE state = '${select.state}' AND ${CLAIMABLE}${select.also === undefined ? '' : ` AND ${select.also}`}
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

/**
 * How many entries of the claim index the head's lookup (in `fair_starts`) reads at most.
 * Past the first few, the entries it passes over are claimed messages still leased (a
 * worker's window) or messages waiting for a retry; when a carrier is down there may be a
 * whole backlog of those, and every insert reading it would cost what the claim costs. So
 * after this many it takes the last tag it read as the head: a lower bound of the true one,
 * so a newcomer then starts no later than it should (its turn comes at once), where the
 * turns are exact below it.
 */
const HEAD_SCAN_LIMIT = 1_000;

/**
 * `fair_starts(principals, ranks, weights, now)`: for each group of an insert (a principal's
 * messages of one class, rows.ts `insertParams`; its first message's weight), where its
 * tags start, as `fairTags` (lifecycle/fair-tags.ts) has it: the later of the principal's last
 * queued tag in the class and one step before the class's head at `now`, or 0 when nothing
 * of the class is queued. The insert adds each message's offset (`(k + 1) * (1 / weight)`,
 * made in Node) to its group's start; so the tags cost one call per insert statement,
 * whatever it carries (a window over the rows in SQL cost the insert of 100 messages a
 * tenth of its time).
 *
 * `now` is the batch's latest acceptance time. The head is the smallest tag a claim could
 * take at `now`: the first claimable entry of
 * messages_queued_idx (leased and retrying messages at the front passed over, as the claim
 * passes them, up to {@link HEAD_SCAN_LIMIT}); when none is claimable, the largest tag
 * queued in the class, the last entry read; looked up once per class. The principal's last
 * queued tag (leased or not, due or not: its whole backlog) is the last entry of its part
 * of messages_principal_queued_idx.
 *
 * PL/pgSQL, with the planner settings of `dueSelection` and for the same reason: a planner
 * that believes few messages queued would read the class's backlog, or the principal's,
 * with a bitmap scan and sort it, for every insert. (And PL/pgSQL keeps its queries' plans
 * for the session, where an SQL function with `SET` options plans them at every call.)
 */
function fairStarts(t: PostgresTables, qualified: string): StoredFunction {
  const body = `
DECLARE
  v_starts double precision[] := '{}';
  v_heads double precision[] := '{NULL, NULL}';
  v_known boolean[] := '{false, false}';
  v_head double precision;
  v_tail double precision;
  v_entry record;
  v_read integer;
BEGIN
  FOR i IN 1 .. coalesce(cardinality(p_principals), 0) LOOP
    IF NOT v_known[p_ranks[i] + 1] THEN
      v_head := NULL;
      v_read := 0;
      FOR v_entry IN
        SELECT fair_tag, ${CLAIMABLE} AS claimable FROM ${t.messages}
        WHERE state = 'queued' AND priority = p_ranks[i]
        ORDER BY ${FAIR_ORDER}
      LOOP
        v_head := v_entry.fair_tag;
        v_read := v_read + 1;
        EXIT WHEN v_entry.claimable OR v_read >= ${HEAD_SCAN_LIMIT};
      END LOOP;
      v_heads[p_ranks[i] + 1] := v_head;
      v_known[p_ranks[i] + 1] := true;
    END IF;
    v_head := v_heads[p_ranks[i] + 1];
    v_tail := (SELECT fair_tag FROM ${t.messages}
      WHERE state = 'queued' AND principal_id = p_principals[i] AND priority = p_ranks[i]
      ORDER BY principal_id DESC, priority DESC, fair_tag DESC
      LIMIT 1);
    v_starts := v_starts || greatest(v_tail, coalesce(v_head - 1 / p_weights[i], 0));
  END LOOP;
  RETURN v_starts;
END
`;
  return {
    name: storedName('fair_starts'),
    body,
    create: `CREATE OR REPLACE FUNCTION ${qualified}(p_principals text[], p_ranks smallint[], p_weights double precision[],
      p_now bigint) RETURNS double precision[] LANGUAGE plpgsql STABLE ${IN_INDEX_ORDER} AS ${TAG}${body}${TAG}`,
  };
}

/**
 * The functions that pick what a claim takes, `due_messages` then `due_callbacks`, and the
 * one that places what an insert stores, `fair_starts`.
 */
export function claimFunctions(t: PostgresTables, names: FunctionNames): StoredFunction[] {
  return [
    // Messages: queued ones, in fair order (the order of messages_queued_idx).
    dueSelection('due_messages', names.dueMessages, {
      key: 'ref',
      table: t.messages,
      state: 'queued',
      order: FAIR_ORDER,
      // A message whose validity ended is never handed out; expire_unsent ends it (lifecycle/timing.ts).
      also: '(valid_until IS NULL OR valid_until > p_now)',
    }),
    // Reports: pending ones, the earliest due first (the order of callbacks_pending_idx).
    dueSelection('due_callbacks', names.dueCallbacks, {
      key: 'uid',
      table: t.callbacks,
      state: 'pending',
      order: 'next_attempt_at, seq',
    }),
    // Where each principal's tags start in an insert (see fairStarts).
    fairStarts(t, names.fairStarts),
  ];
}

/**
 * SQL: the fair tag of message `t` of an insert, whose group (a principal's messages of one
 * class) is `t.grp` and whose offset in it is `t.tag_offset` (rows.ts `insertParams`), given
 * `s.starts`, the groups' starts that `fair_starts` returned: `start + (k + 1) / weight`,
 * the very arithmetic of `fairTags`.
 *
 * Nothing is locked: a counter row per principal would make every insert of a busy key wait
 * for the commit of the one before. So two statements storing one principal's messages at
 * once (two instances, or two batches in flight on one) can read the same last tag and give
 * their messages the same tags; `seq` then orders them, and the principal's turns are
 * approximate while that lasts, as the contract allows.
 */
export const FAIR_TAG = 's.starts[t.grp] + t.tag_offset';

/** The SQL of the two claims; both take `$1` owner, `$2` lease end, `$3` now, `$4` limit. */
export interface ClaimStatements {
  /** Leases the messages `due_messages` picks; their records, in fair order. */
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
      ORDER BY m.priority, m.fair_tag, m.seq`,
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
