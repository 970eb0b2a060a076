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
 * The single-item functions take the same row locks, in the same order, as the Node code
 * they replaced. The batch functions (`record_submissions`, `apply_receipts`) lock all of a
 * batch's messages first, in ref order, then apply the batch in a few statements over it
 * (see their comment). The functions are VOLATILE (the default) on purpose: in READ
 * COMMITTED every statement inside then takes a fresh snapshot, as the separate statements
 * of a transaction did, so a statement after a `FOR UPDATE` that waited sees what the
 * other transaction committed. That is why the lock is a statement of its own before the
 * statement that reads and writes the rows: within one statement, data-modifying CTEs share
 * one snapshot and do not see each other's writes.
 *
 * Names are schema-qualified like the tables, so every deployment's schema holds its own
 * copy, and carry the suffix of the schema version they are written for (see
 * {@link FUNCTIONS_SCHEMA_VERSION}). Results come back as one `json` value; the message
 * records in them are built by the same record query's select list as every read
 * (`row_to_json` of it), so they are what a read returns. `bigint` columns become JSON numbers there (exact: times are far below 2^53).
 *
 * @module
 */
import { TERMINAL_STATES } from '../lifecycle/states.js';

/** The adapter's tables, schema-qualified and quoted (`PostgresStorage`'s `t`). */
export interface PostgresTables {
  /** `<schema>.messages` */
  messages: string;
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
  /** `apply_receipt(carrier_ids, state, reason, description, now, uid, lease_owner, lease_until) -> json` */
  applyReceipt: string;
  /** `finish(ref, state, reason, description, now, uid) -> json` (SQL `NULL` when already terminal) */
  finish: string;
  /** `expire_overdue(before, limit, state, reason, description, now, uids) -> json` (an array) */
  expireOverdue: string;
  /** `record_submissions(refs, idxs, carrier_ids, nows) -> json`: `record_submission` of each, an array */
  recordSubmissions: string;
  /** `apply_receipts(carrier_ids (a json array of arrays), states, reasons, descriptions, nows, uids, lease_owners, lease_untils) -> json`: `apply_receipt` of each, an array */
  applyReceipts: string;
  /** `due_messages(now, limit) -> setof text`: the refs a message claim takes, locked */
  dueMessages: string;
  /** `due_callbacks(now, limit) -> setof text`: the uids a report claim takes, locked */
  dueCallbacks: string;
}

/**
 * The suffix of every function's name: the schema version its code is written for.
 *
 * Why the names carry it: during a rolling upgrade, instances of two versions share one
 * schema, and each one (re)creates the functions it calls when it starts. Were the names the
 * same, an earlier instance that restarted would put back its own bodies, written for the
 * schema before the migration, under the names the newer instances call. A version whose
 * functions need a different schema (a new migration they rely on) bumps this suffix and
 * drops the earlier names in that migration; a change that works on the same schema keeps
 * it, and the body is replaced in place.
 */
export const FUNCTIONS_SCHEMA_VERSION = 4;

/** `name` as it is stored: with the suffix of {@link FUNCTIONS_SCHEMA_VERSION}. */
function storedName(name: string): string {
  return `${name}_v${FUNCTIONS_SCHEMA_VERSION}`;
}

/** The quoted name of the helper the terminal moves share (not called from Node). */
function terminateName(schema: string): string {
  return `${schema}.${storedName('terminate')}`;
}

/** The functions' names in quoted schema `schema`. */
export function functionNames(schema: string): FunctionNames {
  const qualified = (name: string): string => `${schema}.${storedName(name)}`;
  return {
    recordSubmission: qualified('record_submission'),
    applyReceipt: qualified('apply_receipt'),
    finish: qualified('finish'),
    expireOverdue: qualified('expire_overdue'),
    recordSubmissions: qualified('record_submissions'),
    applyReceipts: qualified('apply_receipts'),
    dueMessages: qualified('due_messages'),
    dueCallbacks: qualified('due_callbacks'),
  };
}

/** Dollar-quote tag of the bodies; schema names are letters, digits and `_`, so never in a body. */
const TAG = '$sms_outbox$';

/** `('delivered', 'undelivered', ...)`: the terminal states as an SQL list (constants, safe to inline). */
const TERMINAL_LIST = `(${TERMINAL_STATES.map((state) => `'${state}'`).join(', ')})`;

/**
 * SQL: the 1-based positions in the arrays `keys` (zipped) of the items a batch function
 * applies all at once: those that are the first in the batch to name each of their keys.
 * NULL keys (an unknown carrier id) name nothing, so they never hold an item back.
 */
function firstOfEachKey(keys: string[]): string {
  const names = keys.map((_, k) => `k${k}`);
  return `(SELECT coalesce(array_agg(ord), '{}') FROM (
    SELECT ord, ${names.map((name) => `${name} IS NULL OR row_number() OVER (PARTITION BY ${name} ORDER BY ord) = 1 AS ${name}_first`).join(', ')}
    FROM unnest(${keys.join(', ')}) WITH ORDINALITY AS item(${names.join(', ')}, ord)
  ) item WHERE ${names.map((name) => `${name}_first`).join(' AND ')})`;
}

/**
 * The statements that end a batch function: `call` (an expression of the 1-based item
 * index `i`) for each item the statement over the batch left out (its element of `v_out`
 * is NULL), in batch order, and then the answer, `v_out` as a json array.
 */
function thenOneByOne(call: string): string {
  return `
  v_out := coalesce(v_out, '{}');
  FOR i IN 1 .. cardinality(v_out) LOOP
    IF v_out[i] IS NULL THEN
      v_out[i] := ${call};
    END IF;
  END LOOP;
  RETURN array_to_json(v_out);`;
}

/**
 * SQL: the `leasedReport` of a transition (`{ uid, until }`), or JSON null when `leased` is
 * false: the report was stored leased to the receipt's lease owner.
 */
function leasedReport(leased: string, uid: string, until: string): string {
  return `CASE WHEN ${leased} THEN json_build_object('uid', ${uid}, 'until', ${until}) END`;
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
 * the claim around it. Until the parts table (schema versions 1-3) was first analyzed, the
 * planner guessed 0.5% of it per message for the record query's parts (194 parts a message,
 * 20 s into the 100-message benchmark); times 1,000 claimed rows, the claim's cost passed PostgreSQL's
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
    name: storedName(name),
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
    name: storedName(name),
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
    // the same transaction (the contract: a crash cannot lose it), leased to p_lease_owner
    // until p_lease_until when they are given (PartReceipt.reportLease). Returns the
    // transition, with the leased report when there is one. The report's uid comes from
    // Node (crypto.randomUUID). `p_parts` is the message's parts when the caller changed
    // them (a receipt), else NULL (they stay as stored).
    define(
      'terminate',
      terminate,
      'p_ref text, p_previous_state text, p_state text, p_reason text, p_description text, p_now bigint, p_uid text, p_parts jsonb, p_lease_owner text, p_lease_until bigint',
      `
DECLARE
  v_callback_url text;
BEGIN
  UPDATE ${t.messages} SET state = p_state, status_reason = p_reason, status_description = p_description,
    parts = coalesce(p_parts, parts), updated_at = p_now, lease_owner = NULL, lease_until = NULL
  WHERE ref = p_ref
  RETURNING callback_url INTO v_callback_url;
  IF v_callback_url IS NOT NULL THEN
    INSERT INTO ${t.callbacks} (uid, ref, state, attempts, next_attempt_at, created_at, lease_owner, lease_until)
    VALUES (p_uid, p_ref, 'pending', 0, p_now, p_now, p_lease_owner, p_lease_until);
  END IF;
  RETURN json_build_object('previousState', p_previous_state, 'message', ${record('p_ref')},
    'leasedReport', ${leasedReport('v_callback_url IS NOT NULL AND p_lease_owner IS NOT NULL', 'p_uid', 'p_lease_until')});
END
`,
    ),

    // Returns {kind: 'stale' | 'part'} or {kind: 'submitted', message}. The parts are the
    // message row's parts column (storage/stored-parts.ts): element p_idx gets the carrier id.
    define(
      'record_submission',
      names.recordSubmission,
      'p_ref text, p_idx integer, p_carrier_id text, p_now bigint',
      `
DECLARE
  v_state text;
  v_parts jsonb;
BEGIN
  -- Locking the message serialises the parts of one message recorded by concurrent
  -- calls, so exactly one of them sees the last carrier id arrive.
  SELECT state, parts INTO v_state, v_parts FROM ${t.messages} WHERE ref = p_ref FOR UPDATE;
  IF NOT FOUND OR p_idx < 0 OR p_idx >= jsonb_array_length(v_parts) THEN
    RETURN json_build_object('kind', 'stale');
  END IF;
  v_parts := jsonb_set(v_parts, ARRAY[p_idx::text, '0'], to_jsonb(p_carrier_id));
  -- Indexed whatever the state, so a receipt for a late submission is matched (and
  -- reported late) rather than unknown.
  INSERT INTO ${t.carrierIds} (carrier_id, ref, idx) VALUES (p_carrier_id, p_ref, p_idx)
  ON CONFLICT (carrier_id) DO UPDATE SET ref = EXCLUDED.ref, idx = EXCLUDED.idx;
  IF v_state <> 'queued' THEN
    -- The message moved on: the part keeps its id, the message its time.
    UPDATE ${t.messages} SET parts = v_parts WHERE ref = p_ref;
    RETURN json_build_object('kind', 'stale');
  END IF;
  -- A part without its id yet? ('strict': the default lax mode would unwrap each part's
  -- array and test its elements one by one.)
  IF jsonb_path_exists(v_parts, 'strict $[*] ? (@[0] == null)') THEN
    UPDATE ${t.messages} SET parts = v_parts, updated_at = p_now WHERE ref = p_ref;
    RETURN json_build_object('kind', 'part');
  END IF;
  UPDATE ${t.messages} SET state = 'submitted', parts = v_parts, lease_owner = NULL, lease_until = NULL,
    updated_at = p_now
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
      'p_carrier_ids text[], p_state text, p_reason text, p_description text, p_now bigint, p_uid text, p_lease_owner text, p_lease_until bigint',
      `
DECLARE
  v_ref text;
  v_idx integer;
  v_state text;
  v_parts jsonb;
  v_part jsonb;
  v_decisive integer;
BEGIN
  SELECT ref, idx INTO v_ref, v_idx FROM ${t.carrierIds} WHERE carrier_id = ANY (p_carrier_ids)
  ORDER BY array_position(p_carrier_ids, carrier_id) LIMIT 1;
  IF NOT FOUND THEN
    RETURN json_build_object('kind', 'unknown');
  END IF;
  -- Receipts for two parts of one message may arrive on two instances at once; the
  -- row lock makes the second fold see the first one's outcome.
  SELECT state, parts INTO v_state, v_parts FROM ${t.messages} WHERE ref = v_ref FOR UPDATE;
  IF NOT FOUND OR v_idx >= jsonb_array_length(v_parts) THEN
    RETURN json_build_object('kind', 'unknown');
  END IF;
  IF jsonb_array_length(v_parts -> v_idx) > 1 THEN
    RETURN json_build_object('kind', 'duplicate', 'ref', v_ref);
  END IF;
  v_parts := jsonb_set(v_parts, ARRAY[v_idx::text],
    jsonb_build_array(v_parts -> v_idx -> 0, p_state, p_reason, coalesce(p_description, '')));
  IF v_state IN ${TERMINAL_LIST} THEN
    UPDATE ${t.messages} SET parts = v_parts WHERE ref = v_ref;
    RETURN json_build_object('kind', 'late', 'ref', v_ref);
  END IF;
  -- foldParts (lifecycle/states.ts): while a part awaits its receipt the message waits;
  -- else the first part by index that was not delivered decides; else, all delivered, the last.
  FOR i IN 0 .. jsonb_array_length(v_parts) - 1 LOOP
    v_part := v_parts -> i;
    IF jsonb_array_length(v_part) = 1 THEN
      UPDATE ${t.messages} SET parts = v_parts, updated_at = p_now WHERE ref = v_ref;
      RETURN json_build_object('kind', 'part', 'ref', v_ref);
    END IF;
    IF v_decisive IS NULL AND v_part ->> 1 <> 'delivered' THEN
      v_decisive := i;
    END IF;
  END LOOP;
  v_part := v_parts -> coalesce(v_decisive, jsonb_array_length(v_parts) - 1);
  RETURN json_build_object('kind', 'terminal', 'ref', v_ref, 'transition',
    ${terminate}(v_ref, v_state, v_part ->> 1, v_part ->> 2, v_part ->> 3, p_now, p_uid, v_parts, p_lease_owner, p_lease_until));
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
  RETURN ${terminate}(p_ref, v_state, p_state, p_reason, p_description, p_now, p_uid, NULL, NULL, NULL);
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
      ${terminate}(v_refs[i], 'submitted', p_state, p_reason, p_description, p_now, p_uids[i], NULL, NULL, NULL));
  END LOOP;
  RETURN array_to_json(v_out);
END
`,
      IN_INDEX_ORDER,
    ),

    // The batch forms (see util/batcher.ts): what the single-item function does for each
    // item, in one transaction, so a burst of worker steps shares one commit. Item i's result
    // is element i of the array. An item that raises aborts the whole batch; the adapter then
    // runs each item alone.
    //
    // Each applies its items in a few statements over the whole batch rather than five small
    // statements per item: PostgreSQL's cost per item was mostly the work of running each
    // statement, and this halved it (BENCHMARKS.md, "Tenth session"). A statement sees
    // nothing of its own writes, so it takes only the first item to name each message (and,
    // for submissions, each carrier id); an item naming one again (another part of the same
    // message, a repeated receipt) then runs alone with the single-item function, after it
    // and in batch order, which gives what running the batch in order would. The messages
    // are locked in ref order first, so two batches sharing messages wait for each other
    // rather than deadlock.
    //
    // Why the single-item functions stay beside these: a lone call and each repeated item
    // run them, and the set form run as a batch of one cost several times as much (tried:
    // with three-part messages, 657 against 141 us of PostgreSQL's CPU a submission, 421
    // against 225 a receipt). So each step's rules are written twice, once per item and once
    // over a set, and the test "answers each call of a batch as the call alone would" holds
    // the two to the same results, records and reports.
    define(
      'record_submissions',
      names.recordSubmissions,
      'p_refs text[], p_idxs integer[], p_carrier_ids text[], p_nows bigint[]',
      `
DECLARE
  v_out json[];
  v_at_once bigint[] := ${firstOfEachKey(['p_refs', 'p_carrier_ids'])};
BEGIN
  PERFORM 1 FROM ${t.messages} WHERE ref = ANY (p_refs) ORDER BY ref FOR UPDATE;
  -- As record_submission: every id whose part exists is indexed, whatever the message's state.
  INSERT INTO ${t.carrierIds} (carrier_id, ref, idx)
  SELECT i.carrier_id, i.ref, i.idx FROM unnest(p_refs, p_idxs, p_carrier_ids) WITH ORDINALITY AS i(ref, idx, carrier_id, ord)
  JOIN ${t.messages} m ON m.ref = i.ref
  WHERE i.ord = ANY (v_at_once) AND i.idx >= 0 AND i.idx < jsonb_array_length(m.parts)
  ON CONFLICT (carrier_id) DO UPDATE SET ref = EXCLUDED.ref, idx = EXCLUDED.idx;
  WITH item AS (
    SELECT i.ord, i.ref, i.now, m.state AS previous_state,
      jsonb_set(m.parts, ARRAY[i.idx::text, '0'], to_jsonb(i.carrier_id)) AS parts
    FROM unnest(p_refs, p_idxs, p_carrier_ids, p_nows) WITH ORDINALITY AS i(ref, idx, carrier_id, now, ord)
    JOIN ${t.messages} m ON m.ref = i.ref
    WHERE i.ord = ANY (v_at_once) AND i.idx >= 0 AND i.idx < jsonb_array_length(m.parts)
  ), step AS (
    SELECT item.*, previous_state = 'queued' AND NOT jsonb_path_exists(parts, 'strict $[*] ? (@[0] == null)') AS completes
    FROM item
  ), changed AS (
    -- A message that moved on keeps its time; a queued one is touched, and submitted with its last id.
    UPDATE ${t.messages} m SET parts = step.parts,
      state = CASE WHEN step.completes THEN 'submitted' ELSE m.state END,
      lease_owner = CASE WHEN step.completes THEN NULL ELSE m.lease_owner END,
      lease_until = CASE WHEN step.completes THEN NULL ELSE m.lease_until END,
      updated_at = CASE WHEN step.previous_state = 'queued' THEN step.now ELSE m.updated_at END
    FROM step WHERE m.ref = step.ref
    RETURNING m.*, step.ord AS step_ord, step.previous_state AS step_previous_state, step.completes AS step_completes
  )
  SELECT array_agg(CASE
      WHEN NOT i.ord = ANY (v_at_once) THEN NULL
      WHEN m.step_ord IS NULL OR m.step_previous_state <> 'queued' THEN json_build_object('kind', 'stale')
      WHEN m.step_completes THEN json_build_object('kind', 'submitted', 'message', (SELECT row_to_json(r) FROM (${recordSql}) r))
      ELSE json_build_object('kind', 'part')
    END ORDER BY i.ord)
  INTO v_out
  FROM generate_series(1, cardinality(p_refs)) AS i(ord)
  LEFT JOIN changed m ON m.step_ord = i.ord
  -- A message gets its report only when it ends, so a submitted one has none.
  LEFT JOIN ${t.callbacks} c ON false;
  ${thenOneByOne(`${names.recordSubmission}(p_refs[i], p_idxs[i], p_carrier_ids[i], p_nows[i])`)}
END
`,
    ),
    define(
      'apply_receipts',
      names.applyReceipts,
      'p_carrier_ids json, p_states text[], p_reasons text[], p_descriptions text[], p_nows bigint[], p_uids text[], p_lease_owners text[], p_lease_untils bigint[]',
      `
DECLARE
  v_out json[];
  v_refs text[];
  v_idxs integer[];
  v_at_once bigint[];
BEGIN
  -- Each receipt's part, as apply_receipt finds it: the first of its spellings that is stored.
  SELECT array_agg(a.ref ORDER BY i.ord), array_agg(a.idx ORDER BY i.ord) INTO v_refs, v_idxs
  FROM generate_series(1, cardinality(p_states)) AS i(ord)
  LEFT JOIN LATERAL (
    SELECT ci.ref, ci.idx
    FROM json_array_elements_text(p_carrier_ids -> (i.ord - 1)) WITH ORDINALITY AS spelling(carrier_id, n)
    JOIN ${t.carrierIds} ci ON ci.carrier_id = spelling.carrier_id
    ORDER BY spelling.n LIMIT 1
  ) a ON true;
  v_at_once := ${firstOfEachKey(['v_refs'])};
  PERFORM 1 FROM ${t.messages} WHERE ref = ANY (v_refs) ORDER BY ref FOR UPDATE;
  WITH item AS (
    SELECT i.ord, m.ref, m.state AS previous_state, i.now, i.uid, i.lease_owner, i.lease_until,
      jsonb_array_length(m.parts -> i.idx) > 1 AS reported_before,
      jsonb_set(m.parts, ARRAY[i.idx::text],
        jsonb_build_array(m.parts -> i.idx -> 0, i.state, i.reason, coalesce(i.description, ''))) AS parts
    FROM unnest(v_refs, v_idxs, p_states, p_reasons, p_descriptions, p_nows, p_uids, p_lease_owners, p_lease_untils)
      WITH ORDINALITY AS i(ref, idx, state, reason, description, now, uid, lease_owner, lease_until, ord)
    JOIN ${t.messages} m ON m.ref = i.ref
    WHERE i.ord = ANY (v_at_once) AND i.idx < jsonb_array_length(m.parts)
  ), step AS (
    SELECT item.*, CASE
        WHEN reported_before THEN 'duplicate'
        WHEN previous_state IN ${TERMINAL_LIST} THEN 'late'
        -- A part still awaiting its receipt ([carrierId] alone); 'strict' as in record_submission.
        WHEN jsonb_path_exists(parts, 'strict $[*] ? (@.size() == 1)') THEN 'part'
        ELSE 'terminal'
      END AS kind
    FROM item
  ), decided AS (
    -- foldParts (lifecycle/states.ts), as apply_receipt folds: the first part by index that
    -- was not delivered, else (all delivered) the last one.
    SELECT step.*, d.part AS decisive FROM step
    LEFT JOIN LATERAL (
      SELECT e.part FROM jsonb_array_elements(step.parts) WITH ORDINALITY AS e(part, n)
      WHERE step.kind = 'terminal'
      ORDER BY e.part ->> 1 = 'delivered', CASE WHEN e.part ->> 1 = 'delivered' THEN -e.n ELSE e.n END
      LIMIT 1
    ) d ON true
  ), changed AS (
    -- A late outcome is kept on its part; the message, already terminal, stays as it is.
    UPDATE ${t.messages} m SET parts = d.parts,
      state = CASE WHEN d.kind = 'terminal' THEN d.decisive ->> 1 ELSE m.state END,
      status_reason = CASE WHEN d.kind = 'terminal' THEN d.decisive ->> 2 ELSE m.status_reason END,
      status_description = CASE WHEN d.kind = 'terminal' THEN d.decisive ->> 3 ELSE m.status_description END,
      updated_at = CASE WHEN d.kind IN ('part', 'terminal') THEN d.now ELSE m.updated_at END,
      lease_owner = CASE WHEN d.kind = 'terminal' THEN NULL ELSE m.lease_owner END,
      lease_until = CASE WHEN d.kind = 'terminal' THEN NULL ELSE m.lease_until END
    FROM decided d WHERE m.ref = d.ref AND d.kind <> 'duplicate'
    RETURNING m.*, d.ord AS step_ord, d.kind AS step_kind, d.now AS step_now, d.uid AS step_uid,
      d.lease_owner AS step_lease_owner, d.lease_until AS step_lease_until
  ), reports AS (
    -- The report of each message this batch ended, in the same transaction (the contract),
    -- leased as its receipt asked.
    INSERT INTO ${t.callbacks} (uid, ref, state, attempts, next_attempt_at, created_at, lease_owner, lease_until)
    SELECT step_uid, ref, 'pending', 0, step_now, step_now, step_lease_owner, step_lease_until FROM changed
    WHERE step_kind = 'terminal' AND callback_url IS NOT NULL
    RETURNING *
  )
  SELECT array_agg(CASE
      WHEN NOT i.ord = ANY (v_at_once) THEN NULL
      WHEN d.ord IS NULL THEN json_build_object('kind', 'unknown')
      WHEN d.kind = 'terminal' THEN json_build_object('kind', 'terminal', 'ref', d.ref, 'transition',
        json_build_object('previousState', d.previous_state, 'message', (SELECT row_to_json(r) FROM (${recordSql}) r),
          'leasedReport', ${leasedReport('c.lease_owner IS NOT NULL', 'c.uid', 'c.lease_until')}))
      ELSE json_build_object('kind', d.kind, 'ref', d.ref)
    END ORDER BY i.ord)
  INTO v_out
  FROM generate_series(1, cardinality(p_states)) AS i(ord)
  LEFT JOIN decided d ON d.ord = i.ord
  LEFT JOIN changed m ON m.step_ord = i.ord
  LEFT JOIN reports c ON c.ref = m.ref;
  ${thenOneByOne(
    `${names.applyReceipt}(ARRAY(SELECT json_array_elements_text(p_carrier_ids -> (i - 1))),
      p_states[i], p_reasons[i], p_descriptions[i], p_nows[i], p_uids[i], p_lease_owners[i], p_lease_untils[i])`,
  )}
END
`,
    ),
  ];
}
