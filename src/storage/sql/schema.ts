/**
 * The tables of a SQL record store and their creation: one row per message with the columns
 * the store searches and orders by (its first carrier id among them), and the row's record
 * and book as one JSON text; a side table of the other carrier ids (a long message has one
 * per part, and a receipt names one); idempotency records; credit balances; and the counters of an insert's guard (spend
 * caps). The steps
 * applied are kept in a table of their own, so a later version adds only what is missing.
 *
 * @module
 */
import type { SqlDialect, SqlSession } from './dialect.js';

/** The quoted names of a store's tables. */
export interface SqlTables {
  /** One row per message. */
  messages: string;
  /** `(carrier_id, ref)`: the carrier ids a message's parts were given after its first (which is in its row). */
  carrierIds: string;
  /** Idempotency records by `(principal_id, idem_key)`. */
  idempotency: string;
  /** Credit balances by principal. */
  credit: string;
  /** The counters of an insert's guard by `(principal_id, period)` (`InsertGuard.counters`). */
  counters: string;
  /** The versions of the schema applied. */
  schemaVersion: string;
  /** The index submit claims read the queue by, `(queue, order_key, seq)`. */
  claimIndex: string;
  /** The index report claims read by, `(report_due_at, order_key, seq)`. */
  reportIndex: string;
  /** One row, `id` 1: the last report key given (a message's `report_seq`), locked by each write that gives one until it commits. */
  reportHead: string;
}

/** The names of the tables under `prefix` (already checked to be a plain identifier). */
export function sqlTables(dialect: SqlDialect, prefix: string): SqlTables {
  return {
    messages: dialect.quote(`${prefix}messages`),
    carrierIds: dialect.quote(`${prefix}carrier_ids`),
    idempotency: dialect.quote(`${prefix}idempotency`),
    credit: dialect.quote(`${prefix}credit`),
    counters: dialect.quote(`${prefix}unit_counters`),
    schemaVersion: dialect.quote(`${prefix}schema_version`),
    claimIndex: dialect.quote(`${prefix}messages_claim`),
    reportIndex: dialect.quote(`${prefix}messages_report`),
    reportHead: dialect.quote(`${prefix}report_head`),
  };
}

/**
 * Where a storage's own steps are numbered from. The shared steps are numbered 1, 2, 3...
 * below it and a storage's own 101, 102... so either list grows without renumbering the
 * other, whose applied steps a database has recorded.
 */
export const OWN_STEPS_FROM = 101;

/** One step of the schema: its number and its statements, run in order. */
export interface Migration {
  /** Its number, recorded once it ran: the step before's plus one (see {@link OWN_STEPS_FROM}). */
  version: number;
  /** Its statements, run in order. */
  statements: string[];
}

/** The shared steps, oldest first. Index names carry the prefix: some databases name indexes per schema, not per table. */
function migrations(dialect: SqlDialect, prefix: string, t: SqlTables): Migration[] {
  const { key, text, json, bigint, double, serial } = dialect.types;
  // Packed `data` (rows.ts) holds the recipient at 4, the state at 15, the profile at 2; the
  // first form of it held the record as an object.
  const fromData = (position: number, field: string): string =>
    `COALESCE(${dialect.jsonText('data', [position])}, ${dialect.jsonText('data', ['record', field])})`;
  // Packed `data` holds the report's state at 22 (`callback.state`).
  const callbackState = `COALESCE(${dialect.jsonText('data', [22, 'state'])}, ${dialect.jsonText('data', ['record', 'callback', 'state'])})`;
  // Partial where the database has them: a row out of the queue (or without a report or a
  // timer) then costs those indexes nothing, and every query of them names its column.
  const index = (name: string, table: string, columns: string, onlyWhere?: string): string =>
    `CREATE INDEX ${dialect.quote(`${prefix}${name}`)} ON ${table} (${columns})${onlyWhere !== undefined && dialect.partialIndexes === true ? ` WHERE ${onlyWhere}` : ''}`;
  return [
    {
      version: 1,
      statements: [
        `CREATE TABLE IF NOT EXISTS ${t.messages} (
          seq ${serial} PRIMARY KEY,
          ref ${key} NOT NULL UNIQUE,
          version ${bigint} NOT NULL,
          principal_id ${key} NOT NULL,
          external_id ${text} NOT NULL,
          created_at ${bigint} NOT NULL,
          valid_until ${bigint},
          accepted_at ${bigint} NOT NULL,
          queue smallint,
          order_key ${double} NOT NULL,
          due_at ${bigint} NOT NULL,
          lease_owner ${key},
          lease_until ${bigint},
          report_due_at ${bigint},
          timer varchar(16),
          timer_at ${bigint},
          data ${json} NOT NULL
        )${dialect.tableOptions}`,
        // Claims walk the submit queue in its order; queueEnds reads both ends of a class.
        index('messages_claim', t.messages, 'queue, order_key, seq', 'queue IS NOT NULL'),
        index('messages_principal_queue', t.messages, 'queue, principal_id, order_key', 'queue IS NOT NULL'),
        // countQueued's oldest accepted message per class.
        index('messages_accepted', t.messages, 'queue, accepted_at', 'queue IS NOT NULL'),
        index('messages_report', t.messages, 'report_due_at, order_key, seq', 'report_due_at IS NOT NULL'),
        index('messages_timer', t.messages, 'timer, timer_at, seq', 'timer IS NOT NULL'),
        index('messages_external', t.messages, `principal_id, ${dialect.indexPrefix('external_id', 191)}, created_at, seq`),
        `CREATE TABLE IF NOT EXISTS ${t.carrierIds} (
          carrier_id ${key} NOT NULL,
          ref ${key} NOT NULL,
          PRIMARY KEY (carrier_id, ref)
        )${dialect.tableOptions}`,
        index('carrier_ids_ref', t.carrierIds, 'ref'),
        `CREATE TABLE IF NOT EXISTS ${t.idempotency} (
          principal_id ${key} NOT NULL,
          idem_key ${key} NOT NULL,
          body_hash ${key} NOT NULL,
          status integer NOT NULL,
          body ${text} NOT NULL,
          created_at ${bigint} NOT NULL,
          expires_at ${bigint} NOT NULL,
          PRIMARY KEY (principal_id, idem_key)
        )${dialect.tableOptions}`,
        index('idempotency_expiry', t.idempotency, 'expires_at'),
        `CREATE TABLE IF NOT EXISTS ${t.credit} (
          principal_id ${key} NOT NULL PRIMARY KEY,
          balance ${bigint} NOT NULL
        )${dialect.tableOptions}`,
      ],
    },
    // The head of a class without walking the leased rows before it (a worker's window of
    // messages in flight): the first free row, and the earliest lapsed lease. Only as partial
    // indexes, which hold just those rows; without them the head is walked for (queue.ts),
    // and the step has nothing to do.
    {
      version: 2,
      statements:
        dialect.partialIndexes === true
          ? [
              index('messages_free', t.messages, 'queue, order_key, seq', 'queue IS NOT NULL AND lease_until IS NULL'),
              index('messages_leased', t.messages, 'queue, lease_until', 'queue IS NOT NULL AND lease_until IS NOT NULL'),
            ]
          : [],
    },
    // A message's first carrier id in its row: a one-part message's submission is then one
    // write of one row, not that and a side-table row in a transaction. The ids stored in the
    // side table before this step stay there, and the lookup reads both.
    {
      version: 3,
      statements: [
        `ALTER TABLE ${t.messages} ADD COLUMN carrier_id ${key}`,
        index('messages_carrier', t.messages, 'carrier_id', 'carrier_id IS NOT NULL'),
      ],
    },
    // The counters of an insert's guard (`InsertGuard.counters`): a principal's units of a
    // day or a month, for its spend caps.
    {
      version: 4,
      statements: [
        `CREATE TABLE IF NOT EXISTS ${t.counters} (
          principal_id ${key} NOT NULL,
          period varchar(32) NOT NULL,
          units ${bigint} NOT NULL,
          PRIMARY KEY (principal_id, period)
        )${dialect.tableOptions}`,
      ],
    },
    // The message list (GET {base}/messages): a principal's messages newest first, alone or
    // of one state, recipient or profile (the external id's is messages_external), each an
    // index walked from the page's start.
    {
      version: 5,
      statements: [
        `ALTER TABLE ${t.messages} ADD COLUMN recipient ${key}`,
        `ALTER TABLE ${t.messages} ADD COLUMN state varchar(32)`,
        `ALTER TABLE ${t.messages} ADD COLUMN profile_code ${key}`,
        `UPDATE ${t.messages} SET recipient = ${fromData(4, 'recipient')}, state = ${fromData(15, 'state')}, profile_code = ${fromData(2, 'profileCode')}`,
        index('messages_list', t.messages, 'principal_id, created_at, seq'),
        index('messages_list_state', t.messages, 'principal_id, state, created_at, seq'),
        index('messages_list_recipient', t.messages, 'principal_id, recipient, created_at, seq'),
        index('messages_list_profile', t.messages, 'principal_id, profile_code, created_at, seq'),
      ],
    },
    // The report log (GET {base}/reports): an ended message's report key, which the write that
    // ends it takes from the head row under its lock, so keys increase in commit order.
    {
      version: 6,
      statements: [
        `ALTER TABLE ${t.messages} ADD COLUMN report_seq ${bigint}`,
        index('messages_reports', t.messages, 'principal_id, report_seq', 'report_seq IS NOT NULL'),
        `CREATE TABLE ${t.reportHead} (id integer NOT NULL PRIMARY KEY, seq ${bigint} NOT NULL)${dialect.tableOptions}`,
        `INSERT INTO ${t.reportHead} (id, seq) VALUES (1, 0)`,
      ],
    },
    // Report recovery (GET {base}/callbacks, the replay): a principal's pending or failed
    // reports newest first, each state an index walked from the page's start. Delivered
    // reports, and messages without one, are left out of it (the column is null).
    {
      version: 7,
      statements: [
        `ALTER TABLE ${t.messages} ADD COLUMN callback_state varchar(16)`,
        `UPDATE ${t.messages} SET callback_state = CASE WHEN ${callbackState} IN ('pending', 'failed') THEN ${callbackState} END`,
        index('messages_callbacks', t.messages, 'principal_id, callback_state, created_at, seq', 'callback_state IS NOT NULL'),
      ],
    },
  ];
}

/**
 * Creates the tables under `prefix`, or the steps they miss, on `session`, which holds the
 * database-wide lock of the schema (`SqlClient.exclusive`) so that instances starting at once
 * do not race; `own` are the storage's own steps, numbered from {@link OWN_STEPS_FROM}.
 * Idempotent. Throws when a newer version of the package has changed the tables (a step is
 * recorded that this version does not know).
 */
export async function createSchema(session: SqlSession, dialect: SqlDialect, prefix: string, t: SqlTables, own: readonly Migration[] = []): Promise<void> {
  const run = (sql: string, params?: unknown[]) => session.run(dialect.placeholders(sql), params);
  await run(`CREATE TABLE IF NOT EXISTS ${t.schemaVersion} (version integer NOT NULL PRIMARY KEY)${dialect.tableOptions}`);
  const shared = migrations(dialect, prefix, t);
  checkNumbering(shared, 1, prefix);
  checkNumbering(own, OWN_STEPS_FROM, prefix);
  const steps = [...shared, ...own];
  const { rows } = await run(`SELECT version FROM ${t.schemaVersion}`);
  const applied = new Set(rows.map((row) => Number(row.version)));
  const unknown = [...applied].filter((version) => !steps.some((step) => step.version === version));
  if (unknown.length > 0) {
    // A newer version's schema: this version cannot know what its rows mean.
    throw new Error(
      `the tables under ${prefix} are at schema version ${Math.max(...unknown)}, newer than this version of sms-outbox knows: upgrade it`,
    );
  }
  for (const step of steps) {
    if (applied.has(step.version)) continue;
    for (const statement of step.statements) await run(statement);
    await run(`INSERT INTO ${t.schemaVersion} (version) VALUES (?)`, [step.version]);
  }
}

/** Throws unless `steps` are numbered `first`, `first + 1`, ... in order. */
function checkNumbering(steps: readonly Migration[], first: number, prefix: string): void {
  steps.forEach((step, i) => {
    if (step.version !== first + i) throw new Error(`schema step ${i + 1} under ${prefix} is numbered ${step.version}, not ${first + i}: steps are numbered in order`);
  });
}
