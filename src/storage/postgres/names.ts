/**
 * Every SQL name the PostgreSQL storage derives from its schema: the quoted schema, its
 * tables and its stored functions. They are derived in one place so that the statements,
 * the migrations and the functions' text all name the same objects, and so that two
 * deployments in two schemas of one database never touch each other's.
 *
 * @module
 */

/** Quotes an identifier for SQL (the name is also validated, so this is belt and braces). */
export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** The adapter's data tables, schema-qualified and quoted: what the stored functions use. */
export interface PostgresTables {
  /** `<schema>.messages` */
  messages: string;
  /** `<schema>.carrier_ids` */
  carrierIds: string;
  /** `<schema>.callbacks` */
  callbacks: string;
  /** `<schema>.idempotency_keys` */
  idempotencyKeys: string;
}

/** Every table of the schema, the migrations' own bookkeeping included. */
export interface SchemaTables extends PostgresTables {
  /** `<schema>.migrations`: the versions applied. */
  migrations: string;
}

/** The tables of quoted schema `s`. */
export function schemaTables(s: string): SchemaTables {
  return {
    messages: `${s}.messages`,
    carrierIds: `${s}.carrier_ids`,
    callbacks: `${s}.callbacks`,
    idempotencyKeys: `${s}.idempotency_keys`,
    migrations: `${s}.migrations`,
  };
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
  /** `fair_starts(principals, ranks, weights, now) -> float8[]`: where each principal's tags in each class start (claims.ts) */
  fairStarts: string;
  /** `promote_scheduled(now, limit, reason, description, uids) -> json`: the due scheduled messages queued (lifecycle/timing.ts) */
  promoteScheduled: string;
  /** `expire_unsent(now, limit, reason, description, uids) -> json`: stale queued messages ended (lifecycle/timing.ts) */
  expireUnsent: string;
  /** `cancel_messages(principal, refs, now, grace, reason, description, uids) -> json` (lifecycle/timing.ts) */
  cancelMessages: string;
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
export const FUNCTIONS_SCHEMA_VERSION = 5;

/** `name` as it is stored: with the suffix of {@link FUNCTIONS_SCHEMA_VERSION}. */
export function storedName(name: string): string {
  return `${name}_v${FUNCTIONS_SCHEMA_VERSION}`;
}

/** The quoted name of the helper the terminal moves share (not called from Node). */
export function terminateName(schema: string): string {
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
    fairStarts: qualified('fair_starts'),
    promoteScheduled: qualified('promote_scheduled'),
    expireUnsent: qualified('expire_unsent'),
    cancelMessages: qualified('cancel_messages'),
  };
}
