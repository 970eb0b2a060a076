/**
 * The inbound (MO) tables of a SQL storage that keeps them under its table prefix, as a step
 * of its schema (schema.ts), in the dialect's types: `<prefix>inbound` (a message, its
 * webhook's state and lease, and the key a carrier's redelivery would repeat),
 * `<prefix>opt_outs` and `<prefix>inbound_parts`. The columns are those of the tables SQLite
 * and PostgreSQL made before the shared layer, so `SqlInbound` reads all of them alike, in
 * the tables each storage names ({@link SqlInboundTables}).
 *
 * @module
 */
import type { SqlDialect } from './dialect.js';
import type { Migration } from './schema.js';

/** The tables of the inbound group, quoted as the dialect quotes them. */
export interface SqlInboundTables {
  /** One row per MO message, with its webhook's state (`cb_` columns) and lease. */
  inbound: string;
  /** The opt-out list: `(short_code, number, created_at)`, keyed by the first two. */
  optOuts: string;
  /** The parts of long messages until they are whole: `(msg_key, seq, total, text, received_at)`. */
  parts: string;
  /** The inbound table's integer key, increasing on insert (the last tie-break of every order). */
  id: string;
  /** The index due webhooks are claimed by, for a dialect that must be told ({@link SqlDialect.forceIndex}). */
  dueIndex: string;
  /** The index a principal's webhooks are listed by state along, `(principal_id, cb_state, received_at, id)`. */
  openIndex: string;
}

/** The quoted names of the inbound tables under `prefix`. */
export function sqlInboundTables(dialect: SqlDialect, prefix: string): SqlInboundTables {
  return {
    inbound: dialect.quote(`${prefix}inbound`),
    optOuts: dialect.quote(`${prefix}opt_outs`),
    parts: dialect.quote(`${prefix}inbound_parts`),
    id: 'seq',
    dueIndex: dialect.quote(`${prefix}inbound_due`),
    openIndex: dialect.quote(`${prefix}inbound_open`),
  };
}

/** The schema step `version` that creates the inbound tables under `prefix`. */
export function inboundMigration(dialect: SqlDialect, prefix: string, version: number): Migration {
  const { key, text, bigint, serial } = dialect.types;
  const t = sqlInboundTables(dialect, prefix);
  const index = (name: string, table: string, columns: string, onlyWhere?: string): string =>
    `CREATE INDEX ${dialect.quote(`${prefix}${name}`)} ON ${table} (${columns})${onlyWhere !== undefined && dialect.partialIndexes === true ? ` WHERE ${onlyWhere}` : ''}`;
  return {
    version,
    statements: [
      `CREATE TABLE IF NOT EXISTS ${t.inbound} (
        seq ${serial} PRIMARY KEY,
        ref ${key} NOT NULL UNIQUE,
        principal_id ${key},
        profile_code ${key},
        from_number ${key} NOT NULL,
        to_address ${key} NOT NULL,
        text ${text} NOT NULL,
        received_at ${bigint} NOT NULL,
        callback_url ${text},
        callback_secret ${text},
        uid ${key} UNIQUE,
        cb_state varchar(16),
        cb_attempts integer NOT NULL DEFAULT 0,
        cb_last_status_code integer,
        cb_last_error ${text},
        cb_next_attempt_at ${bigint},
        lease_owner ${key},
        lease_until ${bigint},
        once_key ${text}
      )${dialect.tableOptions}`,
      // Claims read the due webhooks in order; a purge the oldest; a list a principal's newest;
      // a redelivery check the newest of one sender to one recipient.
      index('inbound_due', t.inbound, 'cb_state, cb_next_attempt_at, seq', "cb_state = 'pending'"),
      index('inbound_received', t.inbound, 'received_at, seq'),
      index('inbound_principal', t.inbound, 'principal_id, received_at, seq'),
      index('inbound_newest', t.inbound, 'to_address, from_number, received_at, seq'),
      `CREATE TABLE IF NOT EXISTS ${t.optOuts} (
        short_code ${key} NOT NULL,
        number ${key} NOT NULL,
        created_at ${bigint} NOT NULL,
        PRIMARY KEY (short_code, number)
      )${dialect.tableOptions}`,
      `CREATE TABLE IF NOT EXISTS ${t.parts} (
        msg_key ${key} NOT NULL,
        seq integer NOT NULL,
        total integer NOT NULL,
        text ${text} NOT NULL,
        received_at ${bigint} NOT NULL,
        PRIMARY KEY (msg_key, seq)
      )${dialect.tableOptions}`,
      index('inbound_parts_received', t.parts, 'received_at'),
    ],
  };
}

/**
 * The schema step `version` (the one after {@link inboundMigration}'s) of inbound webhook
 * recovery: the attempts a replay restarted the retry schedule after, and the index a
 * principal's pending and failed webhooks are listed along.
 */
export function inboundRecoveryMigration(dialect: SqlDialect, prefix: string, version: number): Migration {
  const t = sqlInboundTables(dialect, prefix);
  const onlyOpen = dialect.partialIndexes === true ? " WHERE cb_state IN ('pending', 'failed')" : '';
  return {
    version,
    statements: [
      `ALTER TABLE ${t.inbound} ADD COLUMN cb_restarted_after integer`,
      `CREATE INDEX ${t.openIndex} ON ${t.inbound} (principal_id, cb_state, received_at, seq)${onlyOpen}`,
    ],
  };
}
