/**
 * What the stored functions' text is built from: how one is defined (quoted body, versioned
 * name), the SQL fragments several of them share, and the names and record query each one
 * is written against ({@link FunctionScope}). The functions themselves live in
 * `functions-messages.ts`, `functions-batches.ts` and `claims.ts`; this module is the leaf
 * they all import, so each fragment is written once and the modules need not import each
 * other.
 *
 * @module
 */
import { TERMINAL_STATES } from '../../lifecycle/states.js';
import { functionNames, storedName, terminateName, type FunctionNames, type PostgresTables } from './names.js';

/** One stored function: what is compared to decide whether to (re)create it, and how. */
export interface StoredFunction {
  /** Its unqualified name (`pg_proc.proname`). */
  name: string;
  /** Its body (`pg_proc.prosrc`): when the stored one differs, it is replaced. */
  body: string;
  /** `CREATE OR REPLACE FUNCTION ...` of it. */
  create: string;
}

/** Dollar-quote tag of the bodies; schema names are letters, digits and `_`, so never in a body. */
export const TAG = '$sms_outbox$';

/** `('delivered', 'undelivered', ...)`: the terminal states as an SQL list (constants, safe to inline). */
export const TERMINAL_LIST = `(${TERMINAL_STATES.map((state) => `'${state}'`).join(', ')})`;

/**
 * The planner settings of a function that takes the oldest rows of a partial index (see
 * `dueSelection` in claims.ts): with bitmap and sequential scans off, it reads the index in
 * order and stops at its `LIMIT`, whatever the statistics say.
 */
export const IN_INDEX_ORDER = 'SET enable_bitmapscan = off SET enable_seqscan = off';

/** What every function's text is written against: the schema's names and the record query. */
export interface FunctionScope {
  /** The functions' qualified names. */
  names: FunctionNames;
  /** The qualified name of the shared `terminate` helper. */
  terminate: string;
  /** The quoted, qualified table names. */
  t: PostgresTables;
  /** The record query's select list (rows.ts), to which each use appends its `FROM`. */
  recordSql: string;
  /** SQL: the full record of message `refExpr` as json, as every read builds it. */
  record: (refExpr: string) => string;
}

/**
 * The scope of the functions in quoted schema `schema`.
 *
 * @param t The quoted, qualified table names.
 * @param recordSql The record query's select list, to which `FROM messages m LEFT JOIN
 *   callbacks c` is appended, as every read does.
 */
export function functionScope(schema: string, t: PostgresTables, recordSql: string): FunctionScope {
  return {
    names: functionNames(schema),
    terminate: terminateName(schema),
    t,
    recordSql,
    record: (refExpr) =>
      `(SELECT row_to_json(r) FROM (${recordSql}
      FROM ${t.messages} m LEFT JOIN ${t.callbacks} c ON c.ref = m.ref
      WHERE m.ref = ${refExpr}) r)`,
  };
}

/** A PL/pgSQL function returning json; `settings` are `SET` clauses it runs under. */
export function plpgsqlFunction(name: string, qualified: string, args: string, body: string, settings = ''): StoredFunction {
  return {
    name: storedName(name),
    body,
    create: `CREATE OR REPLACE FUNCTION ${qualified}(${args}) RETURNS json LANGUAGE plpgsql ${settings} AS ${TAG}${body}${TAG}`,
  };
}

/**
 * SQL: the `leasedReport` of a transition (`{ uid, until }`), or JSON null when `leased` is
 * false: the report was stored leased to the receipt's lease owner.
 */
export function leasedReport(leased: string, uid: string, until: string): string {
  return `CASE WHEN ${leased} THEN json_build_object('uid', ${uid}, 'until', ${until}) END`;
}
