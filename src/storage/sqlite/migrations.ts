/**
 * Schema creation and versioning for the SQLite storage: the numbered migrations, and the
 * run that sets the connection's pragmas and applies the migrations a database lacks. It
 * runs once per storage, on first use, inside the write lock, so two processes opening a
 * new file together apply each migration once, and a storage never runs against a schema a
 * newer version of sms-outbox has changed.
 *
 * @module
 */
import type Database from 'better-sqlite3';

/** `('delivered', ...)`: the purge index's predicate in migration 1, which stays as it was released. */
const TERMINAL_SQL = `('delivered', 'undelivered', 'expired', 'rejected', 'failed')`;

/**
 * The purge index's predicate (from migration 4), which its query (statements.ts) repeats so
 * that SQLite uses the index: not `queued` nor `submitted`. The query adds that the message
 * is not `scheduled` either (the third pending state, which came later), as a filter of its own.
 *
 * Why not `state IN (<the five terminal states>)`: SQLite checks a partial index's
 * predicate on every write to the table, and it evaluates a constant `IN` list of more than
 * two values by building a temporary b-tree of the list (a pager, a page cache, a zeroed
 * page) at every run of the statement, so every insert, update and delete of a message paid
 * for one or two (about 9% of the instructions of a send, under callgrind). With two values
 * SQLite compares them in place.
 */
export const PURGEABLE_SQL = `state NOT IN ('queued', 'submitted')`;

/**
 * The schema, one migration per entry; `PRAGMA user_version` counts those applied. Append
 * only: a database at version N gets entries N.. on open. Times are epoch-ms integers.
 * Exported for the tests that build a database as an earlier version left it; not part
 * of the package's API.
 */
export const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE sms_messages (
    id INTEGER PRIMARY KEY,
    ref TEXT NOT NULL UNIQUE,
    principal_id TEXT NOT NULL,
    endpoint TEXT NOT NULL,
    profile_code TEXT NOT NULL,
    sender TEXT NOT NULL,
    recipient TEXT NOT NULL,
    text TEXT NOT NULL,
    message_type INTEGER NOT NULL,
    req_type INTEGER NOT NULL,
    external_id TEXT NOT NULL,
    recipient_field TEXT NOT NULL,
    reference_field TEXT NOT NULL,
    sms_count INTEGER NOT NULL,
    encoding TEXT NOT NULL,
    callback_url TEXT,
    callback_secret TEXT,
    created_at INTEGER NOT NULL,
    state TEXT NOT NULL,
    status_reason TEXT,
    status_description TEXT,
    attempts INTEGER NOT NULL DEFAULT 0,
    last_error TEXT,
    next_attempt_at INTEGER NOT NULL,
    lease_owner TEXT,
    lease_until INTEGER,
    updated_at INTEGER NOT NULL
  );
  CREATE INDEX sms_messages_claim ON sms_messages (created_at, id) WHERE state = 'queued';
  CREATE INDEX sms_messages_external ON sms_messages (principal_id, external_id, created_at, id);
  CREATE INDEX sms_messages_purge ON sms_messages (updated_at, id) WHERE state IN ${TERMINAL_SQL};

  CREATE TABLE sms_parts (
    message_id INTEGER NOT NULL,
    idx INTEGER NOT NULL,
    carrier_id TEXT,
    outcome_state TEXT,
    outcome_reason TEXT,
    outcome_description TEXT,
    PRIMARY KEY (message_id, idx)
  ) WITHOUT ROWID;

  CREATE TABLE sms_carrier_ids (
    carrier_id TEXT PRIMARY KEY,
    message_id INTEGER NOT NULL,
    idx INTEGER NOT NULL
  ) WITHOUT ROWID;
  CREATE INDEX sms_carrier_ids_message ON sms_carrier_ids (message_id);

  CREATE TABLE sms_callbacks (
    id INTEGER PRIMARY KEY,
    uid TEXT NOT NULL UNIQUE,
    message_id INTEGER NOT NULL UNIQUE,
    state TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    last_status_code INTEGER,
    last_error TEXT,
    next_attempt_at INTEGER,
    lease_owner TEXT,
    lease_until INTEGER
  );
  CREATE INDEX sms_callbacks_due ON sms_callbacks (next_attempt_at, id) WHERE state = 'pending';
  `,
  // 2: finding messages whose receipts never came (expireOverdue).
  `CREATE INDEX sms_messages_overdue ON sms_messages (updated_at, id) WHERE state = 'submitted';`,
  // 3: a message's parts move into its own row, as JSON (see storage/stored-parts.ts). The
  // carrier-id index stays a table: receipts are looked up by it.
  `
  ALTER TABLE sms_messages ADD COLUMN parts TEXT NOT NULL DEFAULT '[]';
  UPDATE sms_messages SET parts = (
    SELECT json_group_array(CASE WHEN p.outcome_state IS NULL THEN json_array(p.carrier_id)
      ELSE json_array(p.carrier_id, p.outcome_state, p.outcome_reason, p.outcome_description) END)
    FROM (SELECT * FROM sms_parts WHERE message_id = sms_messages.id ORDER BY idx) p);
  DROP TABLE sms_parts;
  `,
  // 4: the purge index says "not pending" rather than listing the terminal states (see PURGEABLE_SQL).
  `
  DROP INDEX sms_messages_purge;
  CREATE INDEX sms_messages_purge ON sms_messages (updated_at, id) WHERE ${PURGEABLE_SQL};
  `,
  // 5: fair queues (claims.ts). Each message carries its class's rank (`priority`, 0
  // transactional, 1 bulk: lifecycle/fair-tags.ts PRIORITY_RANK, written out as stored data
  // never changes meaning) and its virtual tag in the class (`fair_tag`). The claim's order,
  // and what a claim reads and writes, move to a table of their own, `sms_queue`: one row per
  // queued message, clustered by the claim order (rank, tag, message id) after `retrying`
  // (1 while given back for a retry and not yet due, so that the rows a claim can take lead),
  // with what a claim checks and sets (due time, lease). The lease moves there from the
  // message row: a claim of 256 takes 256 adjacent queue rows, a few pages, where leasing
  // the message rows of 256 principals dirtied 256 pages of `sms_messages` (measured with
  // 1,000,000 queued: a commit of 11 ms against 0.4 ms for one principal), so a claim costs
  // the same however many principals are queued. `sms_queue_principal` finds a principal's
  // last queued tag in a class, which each insert reads; `sms_queue_retries` the retries
  // that have come due. The old claim index goes.
  //
  // ADD COLUMN with a constant default rewrites no row. The messages queued before the
  // upgrade get the defaults, bulk and tag 0: the front of the bulk class, where they drain
  // first, in the order they were stored (id: the old order wherever `created_at` rose with
  // it, as when the router stamps it at acceptance), before those stored after, whose tags
  // start at 0 at the earliest (a tie goes to the smaller id); each keeps its due time and lease. Their leases leave the message rows
  // (read before the claim index goes), which no longer hold one.
  `
  ALTER TABLE sms_messages ADD COLUMN priority INTEGER NOT NULL DEFAULT 1;
  ALTER TABLE sms_messages ADD COLUMN fair_tag REAL NOT NULL DEFAULT 0;
  CREATE TABLE sms_queue (
    retrying INTEGER NOT NULL,
    priority INTEGER NOT NULL,
    fair_tag REAL NOT NULL,
    message_id INTEGER NOT NULL,
    principal_id TEXT NOT NULL,
    next_attempt_at INTEGER NOT NULL,
    lease_owner TEXT,
    lease_until INTEGER,
    PRIMARY KEY (retrying, priority, fair_tag, message_id)
  ) WITHOUT ROWID;
  INSERT INTO sms_queue (retrying, priority, fair_tag, message_id, principal_id, next_attempt_at, lease_owner, lease_until)
    SELECT next_attempt_at > CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER), priority, fair_tag, id,
      principal_id, next_attempt_at, lease_owner, lease_until
    FROM sms_messages WHERE state = 'queued' ORDER BY id;
  CREATE INDEX sms_queue_principal ON sms_queue (principal_id, priority, fair_tag);
  CREATE INDEX sms_queue_retries ON sms_queue (next_attempt_at) WHERE retrying = 1;
  UPDATE sms_messages SET lease_owner = NULL, lease_until = NULL
    WHERE state = 'queued' AND (lease_owner IS NOT NULL OR lease_until IS NOT NULL);
  DROP INDEX sms_messages_claim;
  `,
  // 6: counting the queue (countQueued, statements.ts). Each queue row carries its message's
  // acceptance time (`created_at`), and the principal index carries it too, after the key
  // the inserts read (its last tag in a class: unchanged), so the count by class and the
  // oldest acceptance time are one scan of `sms_queue` for everyone (in its key's order, no
  // sort) and one covering range of `sms_queue_principal` for one principal, without reading
  // a message row. Not `min(message_id)`: ids follow the order of storing, and two instances
  // with clocks that disagree store messages out of acceptance order. No index more to
  // maintain: a queue row and its principal entry are a few bytes wider. ADD COLUMN with a
  // constant default rewrites no row; the UPDATE then fills in the rows already queued (every
  // later one is inserted with its time: claims.ts \`enqueue\`).
  `
  ALTER TABLE sms_queue ADD COLUMN created_at INTEGER NOT NULL DEFAULT 0;
  UPDATE sms_queue SET created_at = (SELECT created_at FROM sms_messages WHERE id = sms_queue.message_id);
  DROP INDEX sms_queue_principal;
  CREATE INDEX sms_queue_principal ON sms_queue (principal_id, priority, fair_tag, created_at);
  `,
  // 7: idempotency keys (storage/contract.ts IdempotencyRecord). One row per principal and
  // key, written in the transaction of the request's messages; the key is the primary key,
  // so of two writers of one key the second finds it taken. `sms_idempotency_expiry` finds
  // the expired ones for the sweep.
  `
  CREATE TABLE sms_idempotency (
    principal_id TEXT NOT NULL,
    key TEXT NOT NULL,
    body_hash TEXT NOT NULL,
    status INTEGER NOT NULL,
    body TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    PRIMARY KEY (principal_id, key)
  ) WITHOUT ROWID;
  CREATE INDEX sms_idempotency_expiry ON sms_idempotency (expires_at);
  `,
  // Inbound (MO) messages and the opt-out list (storage/inbound-record.ts). An inbound row
  // carries its own webhook's state and lease, the columns of a report's row, prefixed `cb_`:
  // one webhook per message, written with it. `sms_inbound_due` serves the webhook claims as
  // `sms_callbacks_due` serves the reports'. New tables only, of no other step.
  `
  CREATE TABLE sms_inbound (
    id INTEGER PRIMARY KEY,
    ref TEXT NOT NULL UNIQUE,
    principal_id TEXT,
    profile_code TEXT,
    from_number TEXT NOT NULL,
    to_address TEXT NOT NULL,
    text TEXT NOT NULL,
    received_at INTEGER NOT NULL,
    callback_url TEXT,
    callback_secret TEXT,
    uid TEXT UNIQUE,
    cb_state TEXT,
    cb_attempts INTEGER NOT NULL DEFAULT 0,
    cb_last_status_code INTEGER,
    cb_last_error TEXT,
    cb_next_attempt_at INTEGER,
    lease_owner TEXT,
    lease_until INTEGER
  );
  CREATE INDEX sms_inbound_due ON sms_inbound (cb_next_attempt_at, id) WHERE cb_state = 'pending';
  CREATE INDEX sms_inbound_principal ON sms_inbound (principal_id, received_at, id);
  CREATE INDEX sms_inbound_received ON sms_inbound (received_at, id);
  CREATE TABLE sms_opt_outs (
    short_code TEXT NOT NULL,
    number TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (short_code, number)
  ) WITHOUT ROWID;
  `,
  // The credit ledger (storage/credit-record.ts): a balance per principal, and one charge row
  // per charged message (its units and refund policy, 1 for `unsent-and-failed`), written
  // with the messages (adapter.ts insertMessages). The refund is a trigger on the message's
  // state, so it runs in the very step that ends the message, whatever step that is, and
  // once: the row is marked settled (`refunded`, the units given back) and a settled row is
  // never read again. The WHEN compares with `<>` rather than an `IN` list (see PURGEABLE_SQL)
  // and excludes `delivered` first, so the common end costs one comparison. Unsent units are
  // the parts without a carrier id (storage/stored-parts.ts). A charge row goes with its
  // message when retention deletes it. New tables and triggers only, of no other step.
  `
  CREATE TABLE sms_credit_balances (
    principal_id TEXT PRIMARY KEY,
    balance INTEGER NOT NULL CHECK (balance >= 0),
    updated_at INTEGER NOT NULL
  ) WITHOUT ROWID;
  CREATE TABLE sms_credit_charges (
    ref TEXT PRIMARY KEY,
    principal_id TEXT NOT NULL,
    units INTEGER NOT NULL,
    refund_failed INTEGER NOT NULL,
    charged_at INTEGER NOT NULL,
    refunded INTEGER,
    settled_at INTEGER
  ) WITHOUT ROWID;
  CREATE TRIGGER sms_credit_refund AFTER UPDATE OF state ON sms_messages
  WHEN NEW.state <> 'delivered' AND NEW.state <> 'queued' AND NEW.state <> 'submitted' AND NEW.state <> 'scheduled'
    AND (OLD.state = 'queued' OR OLD.state = 'submitted' OR OLD.state = 'scheduled')
  BEGIN
    UPDATE sms_credit_charges SET settled_at = NEW.updated_at, refunded = CASE
        WHEN refund_failed = 1 THEN units
        WHEN OLD.state = 'submitted' THEN 0
        ELSE (SELECT count(*) FROM json_each(NEW.parts) WHERE json_extract(value, '$[0]') IS NULL) END
      WHERE ref = NEW.ref AND settled_at IS NULL;
    UPDATE sms_credit_balances SET balance = balance + (SELECT refunded FROM sms_credit_charges WHERE ref = NEW.ref),
        updated_at = NEW.updated_at
      WHERE principal_id = NEW.principal_id
        AND EXISTS (SELECT 1 FROM sms_credit_charges WHERE ref = NEW.ref AND settled_at = NEW.updated_at AND refunded > 0);
  END;
  CREATE TRIGGER sms_credit_purge AFTER DELETE ON sms_messages
  BEGIN
    DELETE FROM sms_credit_charges WHERE ref = OLD.ref;
  END;
  `,
  // Scheduled sends and validity periods (storage/timed.ts, sqlite/lifecycle/timing.ts): when a message
  // is due and until when it may go, and the weight a scheduled one is tagged with when due
  // (it has no queue row until then). `sms_messages_scheduled` finds the due ones,
  // `sms_messages_stale` the queued ones whose validity ended. New columns (NULL in every
  // existing row, so no rewrite) and indexes only.
  `
  ALTER TABLE sms_messages ADD COLUMN send_at INTEGER;
  ALTER TABLE sms_messages ADD COLUMN valid_until INTEGER;
  ALTER TABLE sms_messages ADD COLUMN weight REAL;
  CREATE INDEX sms_messages_scheduled ON sms_messages (send_at, id) WHERE state = 'scheduled';
  CREATE INDEX sms_messages_stale ON sms_messages (valid_until, id) WHERE valid_until IS NOT NULL AND state = 'queued';
  `,
  // MO redelivery and long MO parts (storage/inbound-record.ts): each inbound row keeps the
  // key a carrier's redelivery of it would repeat, and `sms_inbound_newest` finds the newest
  // message of a sender to a recipient; `sms_inbound_parts` keeps the parts of long messages
  // until they are whole, by the message's key. A new nullable column (no rewrite), an index
  // and a new table only.
  `
  ALTER TABLE sms_inbound ADD COLUMN once_key TEXT;
  CREATE INDEX sms_inbound_newest ON sms_inbound (to_address, from_number, received_at, id);
  CREATE TABLE sms_inbound_parts (
    msg_key TEXT NOT NULL,
    seq INTEGER NOT NULL,
    total INTEGER NOT NULL,
    text TEXT NOT NULL,
    received_at INTEGER NOT NULL,
    PRIMARY KEY (msg_key, seq)
  ) WITHOUT ROWID;
  CREATE INDEX sms_inbound_parts_received ON sms_inbound_parts (received_at);
  `,
];

/**
 * Sets the connection's pragmas (WAL, `synchronous`, `busy_timeout`) and applies the
 * migrations `db` lacks. Throws if its schema is newer than {@link MIGRATIONS} knows.
 */
export function migrate(db: Database.Database, synchronous: 'FULL' | 'NORMAL', busyTimeoutMs: number): void {
  // journal_mode cannot change inside a transaction; an in-memory database stays 'memory'.
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${synchronous}`);
  db.pragma(`busy_timeout = ${busyTimeoutMs}`);
  // The version is read inside the write lock, so two processes opening a new file at
  // once cannot both run the same migration.
  db.transaction(() => {
    const version = db.pragma('user_version', { simple: true }) as number;
    if (version > MIGRATIONS.length) {
      throw new Error(
        `SqliteStorage: the database schema is version ${version}, newer than this sms-outbox knows (${MIGRATIONS.length}); upgrade sms-outbox`,
      );
    }
    for (let next = version; next < MIGRATIONS.length; next++) db.exec(MIGRATIONS[next]!);
    db.pragma(`user_version = ${MIGRATIONS.length}`);
  }).immediate();
}
