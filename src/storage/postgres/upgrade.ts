/**
 * The move from the earlier PostgreSQL adapter's tables (schema versions 10 and 11 of its
 * numbered migrations, table `migrations`) to the record store's: every message in every
 * state with its parts, carrier ids (those replaced by a second submission included),
 * pending delivery report and unsettled charge, the idempotency records and the credit
 * balances, then the earlier tables and stored functions dropped. It runs inside the
 * transaction of `ready()`, under the schema's advisory lock, so it happens once and whole;
 * version 12 is then recorded in `migrations`, so an instance of the earlier adapter started
 * afterwards refuses the schema (it knows versions up to 11) rather than recreate its tables.
 * The inbound tables the earlier adapter made stay as they are: the store uses them
 * ({@link createInboundTables} makes them in a new schema).
 *
 * @module
 */
import type { MessageRow } from '../record-store.js';
import type { SqlSession } from '../sql/dialect.js';
import { earlierRow } from '../sql/earlier-rows.js';
import type { SqlInboundTables } from '../sql/inbound-schema.js';
import { numOrNull } from '../sql/rows.js';
import type { SqlTables } from '../sql/schema.js';
import type { StoredPart } from '../stored-parts.js';
import { insertParams, postgresStatements } from './statements.js';

/** The inbound tables in quoted schema `s`, as {@link createInboundTables} makes them, for the shared inbound steps (sql/inbound.ts). */
export function postgresInboundTables(s: string): SqlInboundTables {
  // PostgreSQL reads the partial due index by itself: `dueIndex` is named for completeness.
  return { inbound: `${s}.inbound`, optOuts: `${s}.opt_outs`, parts: `${s}.inbound_parts`, id: 'seq', dueIndex: 'inbound_due_idx', openIndex: 'inbound_open_idx' };
}

/**
 * Creates the inbound tables in quoted schema `s` if missing, as the earlier adapter's
 * migrations 8 and 11 made them (a schema it made keeps them, with the column and index of
 * webhook recovery added): `inbound` (a
 * message with its webhook's state and lease, the columns of a report's row prefixed `cb_`,
 * and the key a carrier's redelivery would repeat), `opt_outs`, and `inbound_parts` (the
 * parts of long messages until they are whole).
 */
export async function createInboundTables(session: SqlSession, s: string): Promise<void> {
  const statements = [
    `CREATE TABLE IF NOT EXISTS ${s}.inbound (
      seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      ref text NOT NULL UNIQUE,
      principal_id text,
      profile_code text,
      from_number text NOT NULL,
      to_address text NOT NULL,
      text text NOT NULL,
      received_at bigint NOT NULL,
      callback_url text,
      callback_secret text,
      uid text UNIQUE,
      cb_state text,
      cb_attempts integer NOT NULL DEFAULT 0,
      cb_last_status_code integer,
      cb_last_error text,
      cb_next_attempt_at bigint,
      lease_owner text,
      lease_until bigint
    )`,
    `ALTER TABLE ${s}.inbound ADD COLUMN IF NOT EXISTS once_key text`,
    `ALTER TABLE ${s}.inbound ADD COLUMN IF NOT EXISTS cb_restarted_after integer`,
    `CREATE INDEX IF NOT EXISTS inbound_due_idx ON ${s}.inbound (cb_next_attempt_at, seq) WHERE cb_state = 'pending'`,
    `CREATE INDEX IF NOT EXISTS inbound_principal_idx ON ${s}.inbound (principal_id, received_at DESC, seq DESC)`,
    `CREATE INDEX IF NOT EXISTS inbound_received_idx ON ${s}.inbound (received_at, seq)`,
    `CREATE INDEX IF NOT EXISTS inbound_open_idx ON ${s}.inbound (principal_id, cb_state, received_at DESC, seq DESC) WHERE cb_state IN ('pending', 'failed')`,
    `CREATE INDEX IF NOT EXISTS inbound_newest_idx ON ${s}.inbound (to_address, from_number, received_at DESC, seq DESC)`,
    `CREATE TABLE IF NOT EXISTS ${s}.opt_outs (
      short_code text COLLATE "C" NOT NULL,
      number text COLLATE "C" NOT NULL,
      created_at bigint NOT NULL,
      PRIMARY KEY (short_code, number)
    )`,
    `CREATE TABLE IF NOT EXISTS ${s}.inbound_parts (
      msg_key text NOT NULL,
      seq integer NOT NULL,
      total integer NOT NULL,
      text text NOT NULL,
      received_at bigint NOT NULL,
      PRIMARY KEY (msg_key, seq)
    )`,
    `CREATE INDEX IF NOT EXISTS inbound_parts_received_idx ON ${s}.inbound_parts (received_at)`,
  ];
  for (const statement of statements) await session.run(statement);
}

/** The version recorded in the earlier `migrations` table once its messages have moved. */
export const MOVED_VERSION = 12;

/** Rows moved per statement. */
const CHUNK = 500;

/** The earlier adapter's message tables, dropped once moved (the inbound ones stay: the store uses them as they are). */
const EARLIER_TABLES = ['callbacks', 'carrier_ids', 'credit_charges', 'credit_balances', 'idempotency_keys', 'messages'];

/** A message of the earlier tables, with its report, its charge and every carrier id it was given. */
const SELECT_EARLIER = (s: string) => `SELECT m.*, c.uid AS cb_uid, c.state AS cb_state, c.attempts AS cb_attempts,
    c.last_status_code AS cb_last_status_code, c.last_error AS cb_last_error, c.next_attempt_at AS cb_next_attempt_at,
    c.lease_until AS cb_lease_until, ch.units AS charge_units, ch.refund_failed AS charge_refund_failed,
    coalesce((SELECT json_agg(json_build_array(k.carrier_id, k.idx)) FROM ${s}.carrier_ids k WHERE k.ref = m.ref), '[]') AS ids
  FROM ${s}.messages m
  LEFT JOIN ${s}.callbacks c ON c.ref = m.ref
  LEFT JOIN ${s}.credit_charges ch ON ch.ref = m.ref AND ch.settled_at IS NULL
  ORDER BY m.seq`;

/** The record store's row of an earlier message row (selected by {@link SELECT_EARLIER}). */
function movedRow(m: Record<string, unknown>): MessageRow {
  return earlierRow(m, m.parts as StoredPart[], (record) => {
    const current = new Set(record.parts.map((part) => part.carrierId).filter((id) => id !== null));
    const given = (m.ids as [string, number][]).map(([carrierId, index]) => ({ carrierId, index }));
    const queued = record.state === 'queued';
    return {
      carrierIds: [...new Set([...current, ...given.map(({ carrierId }) => carrierId)])],
      replacedCarrierIds: given.filter(({ carrierId }) => !current.has(carrierId)),
      queue: queued ? Number(m.priority) : null,
      // A pending report's place among those due at one time is its own due time.
      orderKey: record.callback?.state === 'pending' ? (record.callback.nextAttemptAt ?? record.updatedAt) : Number(m.fair_tag),
      dueAt: Number(m.next_attempt_at),
      leaseOwner: queued ? ((m.lease_owner as string | null) ?? null) : null,
      leaseUntil: queued ? numOrNull(m.lease_until) : null,
    };
  });
}

/**
 * Moves the earlier adapter's messages in quoted schema `s` into the store's tables `t`, on
 * `session` (the transaction of `ready()`), if that adapter's tables are there and not yet
 * moved. Throws for a schema at a version before 10: the release before this one upgrades it.
 */
export async function upgradeEarlierTables(session: SqlSession, s: string, t: SqlTables): Promise<void> {
  const { rows: found } = await session.run(`SELECT to_regclass('${s}.migrations') AS migrations, to_regclass('${s}.messages') AS messages`);
  if (found[0]?.migrations === null) {
    // A new schema: recorded as moved, so that the earlier adapter refuses it too.
    await session.run(`CREATE TABLE ${s}.migrations (version integer PRIMARY KEY, applied_at bigint NOT NULL)`);
    await session.run(`INSERT INTO ${s}.migrations (version, applied_at) VALUES ($1, $2)`, [MOVED_VERSION, Date.now()]);
    return;
  }
  const { rows: versions } = await session.run(`SELECT max(version) AS version FROM ${s}.migrations`);
  const version = Number(versions[0]?.version ?? 0);
  if (version >= MOVED_VERSION) return;
  if (version < 10) {
    throw new Error(`PostgresStorage: schema ${s} is at migration ${version}; start the previous release of sms-outbox once to bring it to 10, then this one`);
  }
  if (found[0]?.messages !== null) {
    const { rows } = await session.run(SELECT_EARLIER(s));
    const insert = postgresStatements(t).insert;
    for (let i = 0; i < rows.length; i += CHUNK) {
      await session.run(insert, insertParams(rows.slice(i, i + CHUNK).map(movedRow), undefined));
    }
    await session.run(`INSERT INTO ${t.idempotency} (principal_id, idem_key, body_hash, status, body, created_at, expires_at)
      SELECT principal_id, key, body_hash, status, body, created_at, expires_at FROM ${s}.idempotency_keys ON CONFLICT DO NOTHING`);
    await session.run(`INSERT INTO ${t.credit} AS c (principal_id, balance) SELECT principal_id, balance FROM ${s}.credit_balances
      ON CONFLICT (principal_id) DO UPDATE SET balance = c.balance + EXCLUDED.balance`);
  }
  for (const table of EARLIER_TABLES) await session.run(`DROP TABLE IF EXISTS ${s}.${table}`);
  // Every stored function of the schema was the earlier adapter's (the store has none).
  await session.run(`DO $$
    DECLARE f regprocedure;
    BEGIN
      FOR f IN SELECT p.oid::regprocedure FROM pg_catalog.pg_proc p WHERE p.pronamespace = '${s}'::regnamespace LOOP
        EXECUTE 'DROP FUNCTION ' || f::text;
      END LOOP;
    END $$`);
  await session.run(`INSERT INTO ${s}.migrations (version, applied_at) VALUES ($1, $2)`, [MOVED_VERSION, Date.now()]);
}
