/**
 * The stored functions of the PostgreSQL storage's per-message steps, one call each:
 * `terminate` (the end of a message and the creation of its report, shared by the others),
 * `record_submission`, `apply_receipt`, `finish` and `expire_overdue`. Each runs a whole
 * step (lock the message, change its parts, fold them, end it) as one statement, so one round
 * trip, with the row lock held only as long as PostgreSQL needs it; see functions.ts for why
 * they are functions, and functions-batches.ts for the forms that take many calls at once.
 *
 * @module
 */
import { IN_INDEX_ORDER, leasedReport, plpgsqlFunction, TERMINAL_LIST, type FunctionScope, type StoredFunction } from './function-parts.js';

/**
 * The single-item step functions, `terminate` first (the others call it). Their order is
 * the order they are created in.
 */
export function messageStepFunctions(scope: FunctionScope): StoredFunction[] {
  const { names, terminate, t, record } = scope;
  return [
    // Moves a locked, non-terminal message to the outcome and creates its pending report in
    // the same transaction (the contract: a crash cannot lose it), leased to p_lease_owner
    // until p_lease_until when they are given (PartReceipt.reportLease). Returns the
    // transition, with the leased report when there is one. The report's uid comes from
    // Node (crypto.randomUUID). `p_parts` is the message's parts when the caller changed
    // them (a receipt), else NULL (they stay as stored).
    plpgsqlFunction(
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
    plpgsqlFunction(
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
    plpgsqlFunction(
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
    plpgsqlFunction(
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
    // statistics each sweep would read and sort all of them.
    plpgsqlFunction(
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
  ];
}
