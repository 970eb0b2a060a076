/**
 * The PL/pgSQL functions behind {@link PostgresStorage}'s per-message steps
 * (`recordSubmission`, `applyReceipt`, `finish`, `expireOverdue`), and the SQL functions
 * that pick what a claim takes (`due_messages`, `due_callbacks`; see {@link dueSelection}).
 *
 * Why functions: each step used to be a transaction driven from Node, five to nine
 * statements each a round trip, with the message row locked and the session "idle in
 * transaction" while the busy Node core got round to sending the next statement. As a
 * function the whole step is one statement, so one round trip, and the row lock is held
 * only for as long as PostgreSQL itself needs.
 *
 * Each function runs exactly the statements the Node code ran, in the same order and with
 * the same row locks. The functions are VOLATILE (the default) on purpose: in READ
 * COMMITTED every statement inside then takes a fresh snapshot, as the separate statements
 * of a transaction did, so a statement after a `FOR UPDATE` that waited sees what the
 * other transaction committed. A single statement with data-modifying CTEs could not do
 * that (its parts share one snapshot and do not see each other's writes).
 *
 * Names are schema-qualified like the tables, so every deployment's schema holds its own
 * copy. Results come back as one `json` value; the message records in them are built by
 * the same record query as every read (`row_to_json` of it), so they are what `load()`
 * returned. `bigint` columns become JSON numbers there (exact: times are far below 2^53).
 *
 * @module
 */
import { TERMINAL_STATES } from '../lifecycle/states.js';

/** The adapter's tables, schema-qualified and quoted (`PostgresStorage`'s `t`). */
export interface PostgresTables {
  /** `<schema>.messages` */
  messages: string;
  /** `<schema>.parts` */
  parts: string;
  /** `<schema>.carrier_ids` */
  carrierIds: string;
  /** `<schema>.callbacks` */
  callbacks: string;
}

/** One stored function: what is compared to decide whether to (re)create it, and how. */
export interface StoredFunction {
  /** Its unqualified name (`pg_proc.proname`). */
  name: string;
  /** Its body (`pg_proc.prosrc`): when the stored one differs, it is replaced. */
  body: string;
  /** `CREATE OR REPLACE FUNCTION ...` of it. */
  create: string;
}

/** The schema-qualified names the adapter calls. */
export interface FunctionNames {
  /** `record_submission(ref, idx, carrier_id, now) -> json` */
  recordSubmission: string;
  /** `apply_receipt(carrier_ids, state, reason, description, now, uid) -> json` */
  applyReceipt: string;
  /** `finish(ref, state, reason, description, now, uid) -> json` (SQL `NULL` when already terminal) */
  finish: string;
  /** `expire_overdue(before, limit, state, reason, description, now, uids) -> json` (an array) */
  expireOverdue: string;
  /** `record_submissions(refs, idxs, carrier_ids, nows) -> json`: `record_submission` of each, an array */
  recordSubmissions: string;
  /** `apply_receipts(carrier_ids (a json array of arrays), states, reasons, descriptions, nows, uids) -> json`: `apply_receipt` of each, an array */
  applyReceipts: string;
  /** `due_messages(now, limit) -> setof text`: the refs a message claim takes, locked */
  dueMessages: string;
  /** `due_callbacks(now, limit) -> setof text`: the uids a report claim takes, locked */
  dueCallbacks: string;
}

/** The quoted name of the helper the terminal moves share (not called from Node). */
function terminateName(schema: string): string {
  return `${schema}.terminate`;
}

/** The functions' names in quoted schema `schema`. */
export function functionNames(schema: string): FunctionNames {
  return {
    recordSubmission: `${schema}.record_submission`,
    applyReceipt: `${schema}.apply_receipt`,
    finish: `${schema}.finish`,
    expireOverdue: `${schema}.expire_overdue`,
    recordSubmissions: `${schema}.record_submissions`,
    applyReceipts: `${schema}.apply_receipts`,
    dueMessages: `${schema}.due_messages`,
    dueCallbacks: `${schema}.due_callbacks`,
  };
}

/** Dollar-quote tag of the bodies; schema names are letters, digits and `_`, so never in a body. */
const TAG = '$sms_outbox$';

/** `('delivered', 'undelivered', ...)`: the terminal states as an SQL list (constants, safe to inline). */
const TERMINAL_LIST = `(${TERMINAL_STATES.map((state) => `'${state}'`).join(', ')})`;

/**
 * The body of a batch function: `call` (an expression of the 1-based item index `i`) for
 * each element of the array argument `items`, in order; their results as a json array.
 */
function eachItem(items: string, call: string): string {
  return `
DECLARE
  v_out json[] := '{}';
BEGIN
  FOR i IN 1 .. cardinality(${items}) LOOP
    v_out := array_append(v_out, ${call});
  END LOOP;
  RETURN array_to_json(v_out);
END
`;
}

/**
 * The planner settings of a function that takes the oldest rows of a partial index (see
 * {@link dueSelection}): with bitmap and sequential scans off, it reads the index in order
 * and stops at its `LIMIT`, whatever the statistics say.
 */
const IN_INDEX_ORDER = 'SET enable_bitmapscan = off SET enable_seqscan = off';

/**
 * A function returning the keys of the oldest `p_limit` due, unleased rows of `table` in
 * `state`, in the order of the partial index on that state, locked (`FOR UPDATE SKIP
 * LOCKED`: rows another instance is claiming are passed over).
 *
 * Why a function with its own planner settings rather than a subquery of the claim: the
 * planner, when it believed few rows were in that state (always, in a new schema until
 * autovacuum first analyzes it; and a steady gateway has next to none queued), read them all
 * with a bitmap scan and sorted them, for every claim. During a backlog, which is when
 * claims run back to back, that made each claim cost the whole backlog: 134 ms a claim at
 * 146,000 queued messages (PostgreSQL's own CPU, measured in the 100-message benchmark),
 * against 0.2 ms reading the index in order and stopping at `p_limit`. With bitmap and
 * sequential scans off inside the function, reading the index in order is the plan whatever
 * the statistics say. (A function with `SET` options is never inlined, so they hold.)
 *
 * `ROWS 1` (the planner's guess of how many keys it returns; the default is 1,000) is for
 * the claim around it. Until the parts table is first analyzed, the planner guesses 0.5%
 * of it per message for the record query's parts (194 parts a message, 20 s into the
 * 100-message benchmark); times 1,000 claimed rows, the claim's cost passed PostgreSQL's
 * `jit_above_cost`, and every claim was compiled to machine code first: 300-450 ms a claim,
 * which held a draining backlog to about 200 messages a second (3,700 with JIT off). Costed
 * at one row a claim stays far below the JIT thresholds; the plan (a primary-key lookup per
 * claimed ref) is the right one for any `p_limit` the worker asks for.
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
    name,
    body,
    create: `CREATE OR REPLACE FUNCTION ${qualified}(p_now bigint, p_limit bigint) RETURNS SETOF text LANGUAGE sql
      ROWS 1 ${IN_INDEX_ORDER} AS ${TAG}${body}${TAG}`,
  };
}

/**
 * Every stored function, helpers first (a PL/pgSQL body is only checked when first run,
 * but creating callees first keeps the order obvious).
 *
 * @param schema The quoted schema name.
 * @param t The quoted, qualified table names.
 * @param recordSql The record query's select list (`PostgresStorage`'s `recordSql`), to
 *   which `FROM messages m LEFT JOIN callbacks c` is appended, as every read does.
 */
export function storedFunctions(schema: string, t: PostgresTables, recordSql: string): StoredFunction[] {
  const names = functionNames(schema);
  const terminate = terminateName(schema);
  /** The full record of message `refExpr` as json, as `load()` built it. */
  const record = (refExpr: string): string =>
    `(SELECT row_to_json(r) FROM (${recordSql}
      FROM ${t.messages} m LEFT JOIN ${t.callbacks} c ON c.ref = m.ref
      WHERE m.ref = ${refExpr}) r)`;

  /** A PL/pgSQL function returning json; `settings` are `SET` clauses it runs under. */
  const define = (name: string, qualified: string, args: string, body: string, settings = ''): StoredFunction => ({
    name,
    body,
    create: `CREATE OR REPLACE FUNCTION ${qualified}(${args}) RETURNS json LANGUAGE plpgsql ${settings} AS ${TAG}${body}${TAG}`,
  });

  return [
    dueSelection('due_messages', names.dueMessages, {
      key: 'ref',
      table: t.messages,
      state: 'queued',
      order: 'created_at, seq',
    }),
    dueSelection('due_callbacks', names.dueCallbacks, {
      key: 'uid',
      table: t.callbacks,
      state: 'pending',
      order: 'next_attempt_at, seq',
    }),

    // Moves a locked, non-terminal message to the outcome and creates its pending report in
    // the same transaction (the contract: a crash cannot lose it). Returns the transition.
    // The report's uid comes from Node (crypto.randomUUID), as before.
    define(
      'terminate',
      terminate,
      'p_ref text, p_previous_state text, p_state text, p_reason text, p_description text, p_now bigint, p_uid text',
      `
BEGIN
  UPDATE ${t.messages} SET state = p_state, status_reason = p_reason, status_description = p_description,
    updated_at = p_now, lease_owner = NULL, lease_until = NULL
  WHERE ref = p_ref;
  INSERT INTO ${t.callbacks} (uid, ref, state, attempts, next_attempt_at, created_at)
  SELECT p_uid, ref, 'pending', 0, p_now, p_now FROM ${t.messages} WHERE ref = p_ref AND callback_url IS NOT NULL;
  RETURN json_build_object('previousState', p_previous_state, 'message', ${record('p_ref')});
END
`,
    ),

    // Returns {kind: 'stale' | 'part'} or {kind: 'submitted', message}.
    define(
      'record_submission',
      names.recordSubmission,
      'p_ref text, p_idx integer, p_carrier_id text, p_now bigint',
      `
DECLARE
  v_state text;
BEGIN
  -- Locking the message serialises the parts of one message recorded by concurrent
  -- calls, so exactly one of them sees the last carrier id arrive.
  SELECT state INTO v_state FROM ${t.messages} WHERE ref = p_ref FOR UPDATE;
  IF NOT FOUND THEN
    RETURN json_build_object('kind', 'stale');
  END IF;
  UPDATE ${t.parts} SET carrier_id = p_carrier_id WHERE ref = p_ref AND idx = p_idx;
  IF NOT FOUND THEN
    RETURN json_build_object('kind', 'stale');
  END IF;
  -- Indexed whatever the state, so a receipt for a late submission is matched (and
  -- reported late) rather than unknown.
  INSERT INTO ${t.carrierIds} (carrier_id, ref, idx) VALUES (p_carrier_id, p_ref, p_idx)
  ON CONFLICT (carrier_id) DO UPDATE SET ref = EXCLUDED.ref, idx = EXCLUDED.idx;
  IF v_state <> 'queued' THEN
    RETURN json_build_object('kind', 'stale');
  END IF;
  IF EXISTS (SELECT 1 FROM ${t.parts} WHERE ref = p_ref AND carrier_id IS NULL) THEN
    UPDATE ${t.messages} SET updated_at = p_now WHERE ref = p_ref;
    RETURN json_build_object('kind', 'part');
  END IF;
  UPDATE ${t.messages} SET state = 'submitted', lease_owner = NULL, lease_until = NULL, updated_at = p_now
  WHERE ref = p_ref;
  RETURN json_build_object('kind', 'submitted', 'message', ${record('p_ref')});
END
`,
    ),

    // Returns {kind: 'unknown'}, {kind: 'duplicate' | 'late' | 'part', ref} or
    // {kind: 'terminal', ref, transition}.
    define(
      'apply_receipt',
      names.applyReceipt,
      'p_carrier_ids text[], p_state text, p_reason text, p_description text, p_now bigint, p_uid text',
      `
DECLARE
  v_ref text;
  v_idx integer;
  v_state text;
  v_fold_state text;
  v_fold_reason text;
  v_fold_description text;
BEGIN
  SELECT ref, idx INTO v_ref, v_idx FROM ${t.carrierIds} WHERE carrier_id = ANY (p_carrier_ids)
  ORDER BY array_position(p_carrier_ids, carrier_id) LIMIT 1;
  IF NOT FOUND THEN
    RETURN json_build_object('kind', 'unknown');
  END IF;
  -- Receipts for two parts of one message may arrive on two instances at once; the
  -- row lock makes the second fold see the first one's outcome.
  SELECT state INTO v_state FROM ${t.messages} WHERE ref = v_ref FOR UPDATE;
  IF NOT FOUND THEN
    RETURN json_build_object('kind', 'unknown');
  END IF;
  UPDATE ${t.parts} SET outcome_state = p_state, outcome_reason = p_reason, outcome_description = p_description
  WHERE ref = v_ref AND idx = v_idx AND outcome_state IS NULL;
  IF NOT FOUND THEN
    RETURN json_build_object('kind', 'duplicate', 'ref', v_ref);
  END IF;
  IF v_state IN ${TERMINAL_LIST} THEN
    RETURN json_build_object('kind', 'late', 'ref', v_ref);
  END IF;
  -- foldParts (lifecycle/states.ts) in one query: a part still awaiting its receipt sorts
  -- first (then the message is not terminal yet); else the first part by index that was
  -- not delivered; else, all delivered, the last part.
  SELECT outcome_state, outcome_reason, coalesce(outcome_description, '')
  INTO v_fold_state, v_fold_reason, v_fold_description
  FROM ${t.parts} WHERE ref = v_ref
  ORDER BY outcome_state IS NOT NULL, outcome_state = 'delivered',
    CASE WHEN outcome_state = 'delivered' THEN -idx ELSE idx END
  LIMIT 1;
  IF v_fold_state IS NULL THEN
    UPDATE ${t.messages} SET updated_at = p_now WHERE ref = v_ref;
    RETURN json_build_object('kind', 'part', 'ref', v_ref);
  END IF;
  RETURN json_build_object('kind', 'terminal', 'ref', v_ref, 'transition',
    ${terminate}(v_ref, v_state, v_fold_state, v_fold_reason, v_fold_description, p_now, p_uid));
END
`,
    ),

    // Returns the transition, or SQL NULL when the message is unknown or already terminal.
    define(
      'finish',
      names.finish,
      'p_ref text, p_state text, p_reason text, p_description text, p_now bigint, p_uid text',
      `
DECLARE
  v_state text;
BEGIN
  SELECT state INTO v_state FROM ${t.messages} WHERE ref = p_ref FOR UPDATE;
  IF NOT FOUND OR v_state IN ${TERMINAL_LIST} THEN
    RETURN NULL;
  END IF;
  RETURN ${terminate}(p_ref, v_state, p_state, p_reason, p_description, p_now, p_uid);
END
`,
    ),

    // Returns a json array of transitions, oldest first. The candidates are locked all at
    // once (SKIP LOCKED: rows another instance holds are skipped, so two instances never
    // end the same message twice), then ended one by one; the i-th ended message gets
    // p_uids[i] for its report. Created IN_INDEX_ORDER, as the claims' selections are: a
    // carrier that stops sending receipts leaves every message submitted, and without
    // statistics each sweep read and sorted all of them.
    define(
      'expire_overdue',
      names.expireOverdue,
      'p_before bigint, p_limit bigint, p_state text, p_reason text, p_description text, p_now bigint, p_uids text[]',
      `
DECLARE
  v_refs text[];
  v_out json[] := '{}';
BEGIN
  -- Runs with bitmap and sequential scans off (IN_INDEX_ORDER): the oldest in index order.
  SELECT coalesce(array_agg(o.ref ORDER BY o.updated_at, o.seq), '{}') INTO v_refs
  FROM (
    SELECT ref, updated_at, seq FROM ${t.messages} WHERE state = 'submitted' AND updated_at < p_before
    ORDER BY updated_at, seq LIMIT p_limit FOR UPDATE SKIP LOCKED
  ) o;
  FOR i IN 1 .. cardinality(v_refs) LOOP
    v_out := array_append(v_out,
      ${terminate}(v_refs[i], 'submitted', p_state, p_reason, p_description, p_now, p_uids[i]));
  END LOOP;
  RETURN array_to_json(v_out);
END
`,
      IN_INDEX_ORDER,
    ),

    // The batch forms (see util/batcher.ts): the single-item function for each item in
    // order, in one transaction, so a burst of worker steps shares one commit. Item i's
    // result is element i of the array. An item that raises aborts the whole batch; the
    // adapter then runs each item alone.
    define(
      'record_submissions',
      names.recordSubmissions,
      'p_refs text[], p_idxs integer[], p_carrier_ids text[], p_nows bigint[]',
      eachItem('p_refs', `${names.recordSubmission}(p_refs[i], p_idxs[i], p_carrier_ids[i], p_nows[i])`),
    ),
    define(
      'apply_receipts',
      names.applyReceipts,
      'p_carrier_ids json, p_states text[], p_reasons text[], p_descriptions text[], p_nows bigint[], p_uids text[]',
      eachItem(
        'p_states',
        `${names.applyReceipt}(ARRAY(SELECT json_array_elements_text(p_carrier_ids -> (i - 1))),
      p_states[i], p_reasons[i], p_descriptions[i], p_nows[i], p_uids[i])`,
      ),
    ),
  ];
}
