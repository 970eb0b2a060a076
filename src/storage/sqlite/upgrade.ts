/**
 * The SQLite file's own part of the schema, beside the shared record-store tables: the
 * inbound (MO) tables, and the upgrade of a file written by the SQLite storage of 0.1.0,
 * which kept messages in tables of its own (`sms_messages`, `sms_carrier_ids`,
 * `sms_callbacks`, `sms_queue`, `sms_idempotency`, `sms_credit_balances`,
 * `sms_credit_charges`, schema version 10 or 11 in `PRAGMA user_version`). The upgrade moves
 * every stored message, in every state, into the record-store tables as the ledger would have
 * written it (same state, parts, carrier ids, pending report, place in its queue, lease,
 * charge), with the idempotency records and balances, and drops the old tables, in one
 * transaction: a crash leaves the file as it was, and the next start upgrades it again.
 *
 * @module
 */
import type Database from 'better-sqlite3';
import type { MessageRow } from '../record-store.js';
import type { StoredPart } from '../stored-parts.js';
import { earlierRow } from '../sql/earlier-rows.js';
import { INSERTED_COLUMNS, numOrNull, rowValues, sideCarrierIds, tuple, WRITTEN_COLUMNS } from '../sql/rows.js';
import type { SqlInboundTables } from '../sql/inbound-schema.js';
import type { SqlTables } from '../sql/schema.js';

/** The file's schema version once it holds the record-store tables: older packages refuse to open it. */
export const SCHEMA_VERSION = 12;

/** The inbound tables as {@link INBOUND_SCHEMA} names them, for the shared inbound steps (sql/inbound.ts). */
export const SQLITE_INBOUND_TABLES: SqlInboundTables = {
  inbound: 'sms_inbound',
  optOuts: 'sms_opt_outs',
  parts: 'sms_inbound_parts',
  id: 'id',
  dueIndex: 'sms_inbound_due',
  openIndex: 'sms_inbound_open',
};

/** The inbound tables (storage/inbound-record.ts), as 0.1.0 made them plus the redelivery key, long parts and webhook recovery. */
const INBOUND_SCHEMA = `
  CREATE TABLE IF NOT EXISTS sms_inbound (
    id INTEGER PRIMARY KEY, ref TEXT NOT NULL UNIQUE, principal_id TEXT, profile_code TEXT,
    from_number TEXT NOT NULL, to_address TEXT NOT NULL, text TEXT NOT NULL, received_at INTEGER NOT NULL,
    callback_url TEXT, callback_secret TEXT, uid TEXT UNIQUE, cb_state TEXT,
    cb_attempts INTEGER NOT NULL DEFAULT 0, cb_last_status_code INTEGER, cb_last_error TEXT,
    cb_next_attempt_at INTEGER, lease_owner TEXT, lease_until INTEGER, once_key TEXT, cb_restarted_after INTEGER
  );
  CREATE INDEX IF NOT EXISTS sms_inbound_due ON sms_inbound (cb_next_attempt_at, id) WHERE cb_state = 'pending';
  CREATE INDEX IF NOT EXISTS sms_inbound_principal ON sms_inbound (principal_id, received_at, id);
  CREATE INDEX IF NOT EXISTS sms_inbound_received ON sms_inbound (received_at, id);
  CREATE INDEX IF NOT EXISTS sms_inbound_open ON sms_inbound (principal_id, cb_state, received_at, id);
  CREATE TABLE IF NOT EXISTS sms_opt_outs (
    short_code TEXT NOT NULL, number TEXT NOT NULL, created_at INTEGER NOT NULL, PRIMARY KEY (short_code, number)
  ) WITHOUT ROWID;
  CREATE TABLE IF NOT EXISTS sms_inbound_parts (
    msg_key TEXT NOT NULL, seq INTEGER NOT NULL, total INTEGER NOT NULL, text TEXT NOT NULL,
    received_at INTEGER NOT NULL, PRIMARY KEY (msg_key, seq)
  ) WITHOUT ROWID;
  CREATE INDEX IF NOT EXISTS sms_inbound_parts_received ON sms_inbound_parts (received_at);
`;

/** The old message tables, dropped once moved (their indexes and triggers go with them). */
const LEGACY_TABLES = ['sms_messages', 'sms_carrier_ids', 'sms_callbacks', 'sms_queue', 'sms_idempotency', 'sms_credit_balances', 'sms_credit_charges'];

/** A row of the old `sms_messages` joined with its queue row, report and unsettled charge, as read by {@link LEGACY_SELECT}. */
type LegacyRow = Record<string, unknown> & { ref: string; parts: string };

const LEGACY_SELECT = `
  SELECT m.*, q.fair_tag AS q_tag, q.next_attempt_at AS q_due, q.lease_owner AS q_owner, q.lease_until AS q_until,
    c.uid AS cb_uid, c.state AS cb_state, c.attempts AS cb_attempts, c.last_status_code AS cb_last_status_code,
    c.last_error AS cb_last_error, c.next_attempt_at AS cb_next_attempt_at, c.lease_until AS cb_lease_until,
    k.units AS charge_units, k.refund_failed AS charge_refund_failed
  FROM sms_messages m LEFT JOIN sms_queue q ON q.message_id = m.id LEFT JOIN sms_callbacks c ON c.message_id = m.id
    LEFT JOIN sms_credit_charges k ON k.ref = m.ref AND k.settled_at IS NULL ORDER BY m.id`;

/**
 * Creates the inbound tables, and moves a 0.1.0 file's messages into `tables` (which exist),
 * on `db` inside the caller's transaction. Throws for a file of a newer version, or of an
 * unreleased one older than 0.1.0.
 */
export function upgradeFile(db: Database.Database, tables: SqlTables): void {
  const version = db.pragma('user_version', { simple: true }) as number;
  if (version > SCHEMA_VERSION) {
    throw new Error(`SqliteStorage: the database schema is version ${version}, newer than this sms-outbox knows (${SCHEMA_VERSION}); upgrade sms-outbox`);
  }
  const legacy = db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'sms_messages'`).get() !== undefined;
  if (legacy && version < 10) throw new Error(`SqliteStorage: the database schema is version ${version}, older than sms-outbox 0.1.0's (10); open it with 0.1.0 first`);
  const hasInbound = db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'sms_inbound'`).get() !== undefined;
  for (const [column, type] of [['once_key', 'TEXT'], ['cb_restarted_after', 'INTEGER']] as const) {
    if (hasInbound && db.prepare(`SELECT 1 FROM pragma_table_info('sms_inbound') WHERE name = ?`).get(column) === undefined) {
      db.exec(`ALTER TABLE sms_inbound ADD COLUMN ${column} ${type}`);
    }
  }
  db.exec(INBOUND_SCHEMA);
  if (legacy) moveLegacy(db, tables);
  if (version !== SCHEMA_VERSION) db.pragma(`user_version = ${SCHEMA_VERSION}`);
}

function moveLegacy(db: Database.Database, t: SqlTables): void {
  const insert = db.prepare(`INSERT INTO ${t.messages} (${INSERTED_COLUMNS}) VALUES ${tuple(WRITTEN_COLUMNS.length + 2)}`);
  const carrierId = db.prepare(`INSERT OR IGNORE INTO ${t.carrierIds} (carrier_id, ref) VALUES (?, ?)`);
  const carrierIds = db.prepare<[number], { carrier_id: string; idx: number }>('SELECT carrier_id, idx FROM sms_carrier_ids WHERE message_id = ? ORDER BY idx');
  for (const old of db.prepare(LEGACY_SELECT).all() as LegacyRow[]) {
    const ids = carrierIds.all(old.id as number);
    const row = legacyRow(old, ids);
    insert.run(row.record.ref, 0, ...rowValues(row));
    for (const id of sideCarrierIds(row)) carrierId.run(id, row.record.ref);
  }
  db.exec(`
    INSERT OR IGNORE INTO ${t.idempotency} (principal_id, idem_key, body_hash, status, body, created_at, expires_at)
      SELECT principal_id, key, body_hash, status, body, created_at, expires_at FROM sms_idempotency;
    INSERT INTO ${t.credit} (principal_id, balance) SELECT principal_id, balance FROM sms_credit_balances WHERE true
      ON CONFLICT (principal_id) DO UPDATE SET balance = balance + excluded.balance;
  `);
  for (const table of LEGACY_TABLES) db.exec(`DROP TABLE IF EXISTS ${table}`);
}

/** The record-store row of an old message, with its carrier ids (in the order they were given). */
function legacyRow(old: LegacyRow, ids: { carrier_id: string; idx: number }[]): MessageRow {
  return earlierRow(old, JSON.parse(old.parts) as StoredPart[], (record) => {
    const queued = record.state === 'queued' && old.q_tag !== null;
    const replaced = ids.filter((id) => record.parts[id.idx]?.carrierId !== id.carrier_id);
    return {
      carrierIds: ids.map((id) => id.carrier_id),
      replacedCarrierIds: replaced.map((id) => ({ carrierId: id.carrier_id, index: id.idx })),
      queue: queued ? (old.priority as number) : null,
      // A pending report's place among those due at one time is its own due time (ledger/rows.ts endRow).
      orderKey: queued ? Number(old.q_tag) : record.callback?.state === 'pending' ? (record.callback.nextAttemptAt ?? record.updatedAt) : 0,
      dueAt: queued ? Number(old.q_due) : record.createdAt,
      leaseOwner: queued ? (old.q_owner as string | null) : null,
      leaseUntil: queued ? numOrNull(old.q_until) : null,
    };
  });
}
