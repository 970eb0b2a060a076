/**
 * The batch forms of the PostgreSQL storage's hot steps, `record_submissions` and
 * `apply_receipts`: what the single-item function (functions-messages.ts) does for each call,
 * for a whole batch of concurrent calls (batches.ts) in one transaction, so a burst of worker
 * steps shares one round trip and one commit. Item i's result is element i of the array. An
 * item that raises aborts the whole batch; the adapter then runs each item alone.
 *
 * @module
 */
import { leasedReport, plpgsqlFunction, TERMINAL_LIST, type FunctionScope, type StoredFunction } from './function-parts.js';

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
 * `record_submissions`, then `apply_receipts`.
 *
 * Each applies its items in a few statements over the whole batch rather than five small
 * statements per item, because PostgreSQL's cost per item is mostly the work of running each
 * statement (over the batch, about half). A statement sees nothing of its own writes, so it
 * takes only the first item to name each message (and, for submissions, each carrier id); an
 * item naming one again (another part of the same message, a repeated receipt) then runs
 * alone with the single-item function, after it and in batch order, which gives what running
 * the batch in order would. The messages are locked in ref order first, so two batches
 * sharing messages wait for each other rather than deadlock.
 *
 * Why the single-item functions stay beside these: a lone call and each repeated item run
 * them, and the set form run as a batch of one costs several times as much (with three-part
 * messages, 657 against 141 us of PostgreSQL's CPU a submission). So each step's rules are
 * written twice, once per item and once over a set, and the test "answers each call of a
 * batch as the call alone would" holds the two to the same results, records and reports.
 */
export function batchStepFunctions(scope: FunctionScope): StoredFunction[] {
  const { names, t, recordSql } = scope;
  return [
    plpgsqlFunction(
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
    plpgsqlFunction(
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
