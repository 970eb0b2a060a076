/**
 * The stored functions the PostgreSQL storage keeps in its schema, as one list: the claims'
 * selections (claims.ts), the per-message steps (functions-messages.ts) and their batch
 * forms (functions-batches.ts), which the migration (migrations.ts) creates when missing or
 * changed on every start. Steps are functions because a step driven from Node as a
 * transaction is five to nine statements, each a round trip, with the message row locked and
 * the session "idle in transaction" while the busy Node core gets round to sending the next
 * statement; as a function the whole step is one statement, so one round trip, and the row
 * lock is held only for as long as PostgreSQL itself needs.
 *
 * @module
 */
import { claimFunctions } from './claims.js';
import { functionScope, type StoredFunction } from './function-parts.js';
import { batchStepFunctions } from './functions-batches.js';
import { messageStepFunctions } from './functions-messages.js';
import type { PostgresTables } from './names.js';
import { timedFunctions } from './timed.js';

/**
 * Every stored function, helpers first (a PL/pgSQL body is only checked when first run,
 * but creating callees first keeps the order obvious).
 *
 * The single-item functions lock the message row (`FOR UPDATE`) before they change it or
 * what hangs off it. The batch functions lock all of a batch's messages first, in ref
 * order, then apply the batch in a few statements over it. The functions are VOLATILE (the
 * default) on purpose: in READ COMMITTED every statement inside then takes a fresh snapshot,
 * so a statement after a `FOR UPDATE` that waited sees what the other transaction committed.
 * That is why the lock is a statement of its own before the statement that reads and writes
 * the rows: within one statement, data-modifying CTEs share one snapshot and do not see each
 * other's writes.
 *
 * Names are schema-qualified like the tables, so every deployment's schema holds its own
 * copy, and carry the suffix of the schema version they are written for (names.ts,
 * `FUNCTIONS_SCHEMA_VERSION`). Results come back as one `json` value; the message records in
 * them are built by the same record query's select list as every read (`row_to_json` of
 * it), so they are what a read returns. `bigint` columns become JSON numbers there (exact:
 * times are far below 2^53).
 *
 * @param schema The quoted schema name.
 * @param t The quoted, qualified table names.
 * @param recordSql The record query's select list (rows.ts `RECORD_SELECT`), to which
 *   `FROM messages m LEFT JOIN callbacks c` is appended, as every read does.
 */
export function storedFunctions(schema: string, t: PostgresTables, recordSql: string): StoredFunction[] {
  const scope = functionScope(schema, t, recordSql);
  return [...claimFunctions(t, scope.names), ...messageStepFunctions(scope), ...batchStepFunctions(scope), ...timedFunctions(scope)];
}
