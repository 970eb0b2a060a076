/**
 * The tables of a SQL record store and their creation: one row per message with the columns
 * the store searches and orders by, and the row's record and book as one JSON text; a side
 * table of carrier ids (a row has several, and a receipt names one); idempotency records; and
 * credit balances. The schema's version is kept in a table of its own, so a later version
 * adds only what is missing.
 *
 * @module
 */
import type { SqlClient, SqlDialect } from './dialect.js';

/** The quoted names of a store's tables. */
export interface SqlTables {
  /** One row per message. */
  messages: string;
  /** `(carrier_id, ref)`: every carrier id a message's parts were given. */
  carrierIds: string;
  /** Idempotency records by `(principal_id, idem_key)`. */
  idempotency: string;
  /** Credit balances by principal. */
  credit: string;
  /** The versions of the schema applied. */
  schemaVersion: string;
  /** The index submit claims read the queue by, `(queue, order_key, seq)`. */
  claimIndex: string;
  /** The index report claims read by, `(report_due_at, order_key, seq)`. */
  reportIndex: string;
  /** The report log: `(seq, principal_id, uid, message)`, read by principal in `seq` order. */
  reportLog: string;
  /** One row, `id` 1: the last `seq` the log gave, locked by each append until it commits. */
  reportHead: string;
}

/** The names of the tables under `prefix` (already checked to be a plain identifier). */
export function sqlTables(dialect: SqlDialect, prefix: string): SqlTables {
  return {
    messages: dialect.quote(`${prefix}messages`),
    carrierIds: dialect.quote(`${prefix}carrier_ids`),
    idempotency: dialect.quote(`${prefix}idempotency`),
    credit: dialect.quote(`${prefix}credit`),
    schemaVersion: dialect.quote(`${prefix}schema_version`),
    claimIndex: dialect.quote(`${prefix}messages_claim`),
    reportIndex: dialect.quote(`${prefix}messages_report`),
    reportLog: dialect.quote(`${prefix}report_log`),
    reportHead: dialect.quote(`${prefix}report_head`),
  };
}

/** One step of the schema: its version and its statements, run in order. */
export interface Migration {
  /** The version the tables are at once it ran: one more than the step before. */
  version: number;
  /** Its statements, run in order. */
  statements: string[];
}

/** The schema's steps, oldest first. Index names carry the prefix: some databases name indexes per schema, not per table. */
function migrations(dialect: SqlDialect, prefix: string, t: SqlTables): Migration[] {
  const { key, text, json, bigint, double, serial } = dialect.types;
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
    // indexes, which hold just those rows; without them the head is walked for (queue.ts).
    ...(dialect.partialIndexes === true
      ? [
          {
            version: 2,
            statements: [
              index('messages_free', t.messages, 'queue, order_key, seq', 'queue IS NOT NULL AND lease_until IS NULL'),
              index('messages_leased', t.messages, 'queue, lease_until', 'queue IS NOT NULL AND lease_until IS NOT NULL'),
            ],
          },
        ]
      : []),
  ];
}

/**
 * The shared steps added after a storage's own first steps (`later`), each a list of
 * statements, oldest first: numbered on from the last step before them, so that a database
 * already at a storage's last step runs them too. A new shared step goes at the end.
 */
function appendedSteps(dialect: SqlDialect, prefix: string, t: SqlTables): string[][] {
  const { key, bigint, json } = dialect.types;
  const index = (name: string, columns: string): string => `CREATE INDEX ${dialect.quote(`${prefix}${name}`)} ON ${t.messages} (${columns})`;
  // Packed `data` (rows.ts) holds the recipient at 4, the state at 15, the profile at 2; the
  // first form of it held the record as an object.
  const fromData = (position: number, field: string): string =>
    `COALESCE(${dialect.jsonText('data', [position])}, ${dialect.jsonText('data', ['record', field])})`;
  return [
    // The message list (GET {base}/messages): a principal's messages newest first, alone or
    // of one state, recipient or profile (the external id's is messages_external), each an
    // index walked from the page's start.
    [
      `ALTER TABLE ${t.messages} ADD COLUMN recipient ${key}`,
      `ALTER TABLE ${t.messages} ADD COLUMN state varchar(32)`,
      `ALTER TABLE ${t.messages} ADD COLUMN profile_code ${key}`,
      `UPDATE ${t.messages} SET recipient = ${fromData(4, 'recipient')}, state = ${fromData(15, 'state')}, profile_code = ${fromData(2, 'profileCode')}`,
      index('messages_list', 'principal_id, created_at, seq'),
      index('messages_list_state', 'principal_id, state, created_at, seq'),
      index('messages_list_recipient', 'principal_id, recipient, created_at, seq'),
      index('messages_list_profile', 'principal_id, profile_code, created_at, seq'),
    ],
    // The report log (GET {base}/reports): each report made, with a key the head row gives
    // under its lock, so keys increase in commit order.
    [
      `CREATE TABLE ${t.reportLog} (
        seq ${bigint} NOT NULL PRIMARY KEY,
        principal_id ${key} NOT NULL,
        uid ${key} NOT NULL,
        message ${json} NOT NULL
      )${dialect.tableOptions}`,
      `CREATE INDEX ${dialect.quote(`${prefix}report_log_principal`)} ON ${t.reportLog} (principal_id, seq)`,
      `CREATE TABLE ${t.reportHead} (id integer NOT NULL PRIMARY KEY, seq ${bigint} NOT NULL)${dialect.tableOptions}`,
      `INSERT INTO ${t.reportHead} (id, seq) VALUES (1, 0)`,
    ],
  ];
}

/**
 * Creates the tables under `prefix`, or the steps they miss, holding a database-wide lock so
 * that instances starting at once do not race; `later` are the storage's own steps after the
 * shared first ones (versions 2 and on), and the shared steps added since follow them.
 * Idempotent. Throws when a newer version of the package
 * has changed the tables.
 */
export async function createSchema(client: SqlClient, dialect: SqlDialect, prefix: string, t: SqlTables, later: readonly Migration[] = []): Promise<void> {
  await client.exclusive(`${prefix}schema`, async (session) => {
    const run = (sql: string, params?: unknown[]) => session.run(dialect.placeholders(sql), params);
    await run(`CREATE TABLE IF NOT EXISTS ${t.schemaVersion} (version integer NOT NULL PRIMARY KEY)${dialect.tableOptions}`);
    const { rows } = await run(`SELECT MAX(version) AS version FROM ${t.schemaVersion}`);
    const current = Number(rows[0]?.version ?? 0);
    const first = [...migrations(dialect, prefix, t), ...later];
    const steps = [...first, ...appendedSteps(dialect, prefix, t).map((statements, i) => ({ version: first.length + i + 1, statements }))];
    // A storage's own steps follow the shared ones, which a dialect may lengthen (partial indexes).
    steps.forEach((step, i) => {
      if (step.version !== i + 1) throw new Error(`schema step ${i + 1} under ${prefix} is numbered ${step.version}: the steps must be numbered 1, 2, 3, ... in order`);
    });
    const latest = steps.at(-1)!.version;
    if (current > latest) {
      // A newer version's schema: this version cannot know what its rows mean.
      throw new Error(`the tables under ${prefix} are at schema version ${current}, newer than this version of sms-outbox knows (${latest}): upgrade it`);
    }
    for (const migration of steps) {
      if (migration.version <= current) continue;
      for (const statement of migration.statements) await run(statement);
      await run(`INSERT INTO ${t.schemaVersion} (version) VALUES (?)`, [migration.version]);
    }
  });
}
