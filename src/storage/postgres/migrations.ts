/**
 * Schema creation and versioning for the PostgreSQL storage: the numbered migrations, and
 * the run that applies those a schema lacks and brings its stored functions up to date. It
 * runs once per storage, on first use, under an advisory lock, so instances of one
 * deployment starting together apply each migration once, and an instance never runs
 * against a schema a newer version has changed.
 *
 * @module
 */
import type { Pool, PoolClient } from 'pg';
import type { StoredFunction } from './function-parts.js';
import { creditMigration } from './credit.js';
import { quoteIdent, schemaTables } from './names.js';
import { timedMigration } from './timed.js';
import { transaction } from './transaction.js';

/** First key of the two-key advisory lock the migrations take: "SMSO" in ASCII. */
const LOCK_NAMESPACE = 0x534d534f;

/** FNV-1a of the schema name as a signed 32-bit int: the advisory lock's second key. */
function lockKey(schema: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < schema.length; i++) {
    hash ^= schema.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash | 0;
}

/**
 * The schema's migrations, in order. Each one is applied once per schema, in one
 * transaction with the row that records it, so a crash mid-way leaves nothing half-made.
 * Append new versions; never edit a released one. `s` is the quoted schema name. Exported
 * for the tests that build a schema as an earlier version left it.
 */
export function migrations(s: string): { version: number; statements: string[] }[] {
  return [
    {
      version: 1,
      statements: [
        `CREATE TABLE ${s}.messages (
          seq bigint GENERATED ALWAYS AS IDENTITY,
          ref text PRIMARY KEY,
          principal_id text NOT NULL,
          endpoint text NOT NULL,
          profile_code text NOT NULL,
          sender text NOT NULL,
          recipient text NOT NULL,
          text text NOT NULL,
          message_type integer NOT NULL,
          req_type integer NOT NULL,
          external_id text NOT NULL,
          recipient_field text NOT NULL,
          reference_field text NOT NULL,
          sms_count integer NOT NULL,
          encoding text NOT NULL,
          callback_url text,
          callback_secret text,
          created_at bigint NOT NULL,
          state text NOT NULL,
          status_reason text,
          status_description text,
          attempts integer NOT NULL DEFAULT 0,
          last_error text,
          next_attempt_at bigint NOT NULL,
          lease_owner text,
          lease_until bigint,
          updated_at bigint NOT NULL
        )`,
        // Claims scan only queued messages, oldest first.
        `CREATE INDEX messages_queued_idx ON ${s}.messages (created_at, seq) WHERE state = 'queued'`,
        `CREATE INDEX messages_external_id_idx ON ${s}.messages (principal_id, external_id, created_at DESC, seq DESC)`,
        `CREATE INDEX messages_purge_idx ON ${s}.messages (updated_at, seq) WHERE state NOT IN ('queued', 'submitted')`,
        `CREATE TABLE ${s}.parts (
          ref text NOT NULL REFERENCES ${s}.messages (ref) ON DELETE CASCADE,
          idx integer NOT NULL,
          carrier_id text,
          outcome_state text,
          outcome_reason text,
          outcome_description text,
          PRIMARY KEY (ref, idx)
        )`,
        // Every carrier id a part was ever given; a reused id points at its latest part.
        `CREATE TABLE ${s}.carrier_ids (
          carrier_id text PRIMARY KEY,
          ref text NOT NULL,
          idx integer NOT NULL,
          FOREIGN KEY (ref, idx) REFERENCES ${s}.parts (ref, idx) ON DELETE CASCADE
        )`,
        `CREATE INDEX carrier_ids_part_idx ON ${s}.carrier_ids (ref, idx)`,
        `CREATE TABLE ${s}.callbacks (
          seq bigint GENERATED ALWAYS AS IDENTITY,
          uid text PRIMARY KEY,
          ref text NOT NULL UNIQUE REFERENCES ${s}.messages (ref) ON DELETE CASCADE,
          state text NOT NULL,
          attempts integer NOT NULL DEFAULT 0,
          last_status_code integer,
          last_error text,
          next_attempt_at bigint,
          lease_owner text,
          lease_until bigint,
          created_at bigint NOT NULL
        )`,
        `CREATE INDEX callbacks_pending_idx ON ${s}.callbacks (next_attempt_at, seq) WHERE state = 'pending'`,
      ],
    },
    {
      // Finding messages whose receipts never came (expireOverdue).
      version: 2,
      statements: [`CREATE INDEX messages_overdue ON ${s}.messages (updated_at, seq) WHERE state = 'submitted'`],
    },
    {
      // No foreign keys. Each one runs a trigger per inserted row that looks the parent up
      // and locks it (FOR KEY SHARE): per message a lookup and a lock of the message for
      // its part, and of the part for its carrier id; without them 100-message requests
      // insert 1.3-1.7x as fast. The adapter is the only writer of these tables and writes a
      // parent with its children in one statement or function, and purge deletes the
      // children itself.
      version: 3,
      statements: [
        `ALTER TABLE ${s}.carrier_ids DROP CONSTRAINT IF EXISTS carrier_ids_ref_idx_fkey`,
        `ALTER TABLE ${s}.parts DROP CONSTRAINT IF EXISTS parts_ref_fkey`,
        `ALTER TABLE ${s}.callbacks DROP CONSTRAINT IF EXISTS callbacks_ref_fkey`,
      ],
    },
    {
      // A message's parts move into its own row, as jsonb in the shape the SQLite adapter
      // keeps (storage/stored-parts.ts): each step of a message (insert, submission, receipt,
      // the record it returns) then writes and reads one row rather than two tables. The
      // functions of this version carry the suffix `_v4` (FUNCTIONS_SCHEMA_VERSION); the
      // earlier ones, written for the parts table, go.
      //
      // Rolling upgrades: an instance of an earlier version still running after this
      // migration fails every step that touches the parts table (its inserts, claims,
      // lookups and functions) with an error, so it stores nothing half-made and accepts
      // nothing; its leased messages are claimed again when their leases end. Stop earlier
      // instances before starting this version, or expect them to fail until replaced
      // (README, "Upgrading").
      version: 4,
      statements: [
        `ALTER TABLE ${s}.messages ADD COLUMN parts jsonb`,
        `UPDATE ${s}.messages m SET parts = coalesce((
          SELECT jsonb_agg(CASE WHEN p.outcome_state IS NULL THEN jsonb_build_array(p.carrier_id)
            ELSE jsonb_build_array(p.carrier_id, p.outcome_state, p.outcome_reason, coalesce(p.outcome_description, ''))
            END ORDER BY p.idx)
          FROM ${s}.parts p WHERE p.ref = m.ref), '[]'::jsonb)`,
        `ALTER TABLE ${s}.messages ALTER COLUMN parts SET NOT NULL`,
        `DROP TABLE ${s}.parts`,
        `DO $$
        DECLARE f regprocedure;
        BEGIN
          FOR f IN SELECT p.oid::regprocedure FROM pg_catalog.pg_proc p
            WHERE p.pronamespace = '${s}'::regnamespace AND p.proname IN ('terminate', 'record_submission',
              'apply_receipt', 'finish', 'expire_overdue', 'record_submissions', 'apply_receipts', 'due_messages',
              'due_callbacks')
          LOOP
            EXECUTE 'DROP FUNCTION ' || f::text;
          END LOOP;
        END $$`,
      ],
    },
    {
      // Fair queues (claims.ts): each message carries its class's rank (`priority`,
      // lifecycle/fair-tags.ts PRIORITY_RANK: 0 transactional, 1 bulk; written out here, as
      // stored data never changes meaning) and its virtual tag in the class (`fair_tag`), and
      // claims take the queued ones by (rank, tag, seq): the claim index changes from
      // (created_at, seq) to that, under the same name. A second index finds a principal's
      // last queued tag in a class, which each insert reads.
      //
      // The defaults (bulk, tag 0) make both columns metadata only (no table rewrite) and
      // give the messages queued before the upgrade the front of the bulk class, where they
      // drain first, in the order they were stored (seq), before the messages stored after
      // it (whose tags are 0 or more, and whose seq is later). The functions of this version
      // carry the suffix `_v5`; the `_v4` ones (which claim by created_at, with an index that
      // is gone) go, so an instance of schema 4 still running fails its claims and steps, as
      // after any upgrade that changes the schema version (README, "Upgrading"). Its inserts
      // (a statement, not a function) still store whole messages, at the defaults: the front
      // of the bulk class, claimed by the new instances once their insert leases end.
      // Building the two indexes reads the queued messages once, under the migration's lock.
      version: 5,
      statements: [
        `ALTER TABLE ${s}.messages ADD COLUMN priority smallint NOT NULL DEFAULT 1`,
        `ALTER TABLE ${s}.messages ADD COLUMN fair_tag double precision NOT NULL DEFAULT 0`,
        `DROP INDEX ${s}.messages_queued_idx`,
        `CREATE INDEX messages_queued_idx ON ${s}.messages (priority, fair_tag, seq) WHERE state = 'queued'`,
        `CREATE INDEX messages_principal_queued_idx ON ${s}.messages (principal_id, priority, fair_tag) WHERE state = 'queued'`,
        `DO $$
        DECLARE f regprocedure;
        BEGIN
          FOR f IN SELECT p.oid::regprocedure FROM pg_catalog.pg_proc p
            WHERE p.pronamespace = '${s}'::regnamespace AND p.proname IN ('terminate_v4', 'record_submission_v4',
              'apply_receipt_v4', 'finish_v4', 'expire_overdue_v4', 'record_submissions_v4', 'apply_receipts_v4',
              'due_messages_v4', 'due_callbacks_v4')
          LOOP
            EXECUTE 'DROP FUNCTION ' || f::text;
          END LOOP;
        END $$`,
      ],
    },
    {
      // Counting the queue (countQueued, statements.ts): the principal's index of queued
      // messages carries each one's acceptance time (INCLUDE, not a key column), so the count
      // by class and the oldest `created_at`, for everyone or for one principal, are one
      // index-only scan; without it the oldest was a read of every queued row in the heap
      // (1,000,000 queued: 420-575 ms against 200-280 ms for the whole count, 6.7 ms against
      // 0.3 ms for a principal with 1,000). The key is unchanged, so the inserts' lookup of a
      // principal's last tag and the claims read it as before; an entry is 8 bytes wider, and
      // there is no index more to maintain. Rebuilt under the same name (the build reads the
      // queued messages once, under the migration's lock, blocking writes for it: 2.5-4.5 s with
      // 1,000,000 queued). Nothing else changes: instances of schema 5 still running go on
      // working (their SQL names no index), only new ones of that version refuse to start.
      version: 6,
      statements: [
        `DROP INDEX ${s}.messages_principal_queued_idx`,
        `CREATE INDEX messages_principal_queued_idx ON ${s}.messages (principal_id, priority, fair_tag)
          INCLUDE (created_at) WHERE state = 'queued'`,
      ],
    },
    {
      // Idempotency keys (storage/contract.ts IdempotencyRecord): one row per principal and
      // key, written by the statement that inserts the request's messages (statements.ts
      // `insertMessagesKeyed`), so a crash keeps both or neither. The primary key decides
      // between two instances writing one key at once: the second waits for the first's
      // commit, then finds the key taken. The expiry index serves the sweep. A new table only:
      // instances of schema 6 still running go on working (they never name it).
      version: 7,
      statements: [
        `CREATE TABLE ${s}.idempotency_keys (
          principal_id text NOT NULL,
          key text NOT NULL,
          body_hash text NOT NULL,
          status integer NOT NULL,
          body text NOT NULL,
          created_at bigint NOT NULL,
          expires_at bigint NOT NULL,
          PRIMARY KEY (principal_id, key)
        )`,
        `CREATE INDEX idempotency_keys_expiry_idx ON ${s}.idempotency_keys (expires_at)`,
      ],
    },
    {
      // Inbound (MO) messages and the opt-out list (storage/inbound-record.ts). An inbound row
      // carries its own webhook's state and lease (the columns of a report's row, prefixed
      // `cb_`): one webhook per message, written with it. The due index serves the webhook
      // claims as callbacks_pending_idx serves the reports'. New tables only: instances of an
      // earlier schema still running go on working (they never name them).
      version: 8,
      statements: [
        `CREATE TABLE ${s}.inbound (
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
        `CREATE INDEX inbound_due_idx ON ${s}.inbound (cb_next_attempt_at, seq) WHERE cb_state = 'pending'`,
        `CREATE INDEX inbound_principal_idx ON ${s}.inbound (principal_id, received_at DESC, seq DESC)`,
        `CREATE INDEX inbound_received_idx ON ${s}.inbound (received_at, seq)`,
        `CREATE TABLE ${s}.opt_outs (
          short_code text COLLATE "C" NOT NULL,
          number text COLLATE "C" NOT NULL,
          created_at bigint NOT NULL,
          PRIMARY KEY (short_code, number)
        )`,
      ],
    },
    {
      // The credit ledger (credit.ts creditMigration): balances, charge rows, the function
      // that takes a batch's charges, and the refund trigger on a message's state. New
      // tables, functions and triggers only: instances of an earlier schema still running go
      // on working (their ends fire the trigger, which finds no charge of theirs).
      version: 9,
      statements: creditMigration(s),
    },
    {
      // Scheduled sends and validity periods (timed.ts timedMigration): when a message is due,
      // until when it may go, and the weight a scheduled one is tagged with when due; the
      // indexes that find the due and the stale ones. New nullable columns (no rewrite) and
      // indexes: instances of an earlier schema still running go on working.
      version: 10,
      statements: timedMigration(s),
    },
    {
      // MO redelivery and long MO parts (storage/inbound-record.ts): each inbound row keeps
      // the key a carrier's redelivery of it would repeat, and inbound_newest_idx finds the
      // newest message of a sender to a recipient; inbound_parts keeps the parts of long
      // messages until they are whole, by the message's key. A new nullable column (no
      // rewrite), an index and a new table: instances of an earlier schema still running go
      // on working (they never name them).
      version: 11,
      statements: [
        `ALTER TABLE ${s}.inbound ADD COLUMN once_key text`,
        `CREATE INDEX inbound_newest_idx ON ${s}.inbound (to_address, from_number, received_at DESC, seq DESC)`,
        `CREATE TABLE ${s}.inbound_parts (
          msg_key text NOT NULL,
          seq integer NOT NULL,
          total integer NOT NULL,
          text text NOT NULL,
          received_at bigint NOT NULL,
          PRIMARY KEY (msg_key, seq)
        )`,
        `CREATE INDEX inbound_parts_received_idx ON ${s}.inbound_parts (received_at)`,
      ],
    },
  ];
}


/**
 * Creates schema `schema` if missing and applies its pending migrations, then installs
 * `functions` (see {@link installFunctions}), all in one transaction under the schema's
 * advisory lock. Throws if a newer version has migrated the schema.
 */
export async function migrate(pool: Pool, schema: string, functions: readonly StoredFunction[]): Promise<void> {
  const s = quoteIdent(schema);
  const t = schemaTables(s);
  await transaction(pool, async (db) => {
    // Instances starting together queue here; each one then sees what the first applied.
    await db.query('SELECT pg_advisory_xact_lock($1::int4, $2::int4)', [LOCK_NAMESPACE, lockKey(schema)]);
    await db.query(`CREATE SCHEMA IF NOT EXISTS ${s}`);
    await db.query(
      `CREATE TABLE IF NOT EXISTS ${t.migrations} (version integer PRIMARY KEY, applied_at bigint NOT NULL)`,
    );
    const { rows } = await db.query<{ version: number }>(`SELECT version FROM ${t.migrations}`);
    const applied = new Set(rows.map((row) => row.version));
    const known = migrations(s);
    const newest = known[known.length - 1]!.version;
    const ahead = rows.map((row) => row.version).filter((version) => version > newest);
    if (ahead.length > 0) {
      // A newer version migrated this schema: this version's SQL may no longer fit it, and
      // its functions must not be put back over the newer ones. Refusing to start is the
      // one safe answer during a rolling upgrade's overlap (README, "Upgrading").
      throw new Error(
        `PostgresStorage: schema ${schema} is at migration ${Math.max(...ahead)}, newer than this version of sms-outbox knows (${newest}); run the newer version`,
      );
    }
    for (const migration of known) {
      if (applied.has(migration.version)) continue;
      for (const statement of migration.statements) await db.query(statement);
      await db.query(`INSERT INTO ${t.migrations} (version, applied_at) VALUES ($1, $2)`, [
        migration.version,
        Date.now(),
      ]);
    }
    await installFunctions(db, schema, functions);
  });
}

/**
 * Creates the stored functions (functions.ts) that are missing or whose body differs from
 * this version's, under the migration's advisory lock. They are not a numbered migration: a
 * function is replaced in place when its code changes, and a schema migrated before the
 * functions existed gets them on its next start. A start that finds them up to date writes
 * nothing (no catalog churn, and a role that may not replace them can still start). A
 * change of a function's arguments adds an overload beside the earlier one, which instances
 * of the earlier version, still running during a rollout, go on calling; the migration that
 * next bumps `FUNCTIONS_SCHEMA_VERSION` drops every overload of the earlier names. A change
 * of a result type needs a `DROP FUNCTION` first: `CREATE OR REPLACE` would fail.
 */
async function installFunctions(db: PoolClient, schema: string, functions: readonly StoredFunction[]): Promise<void> {
  const { rows } = await db.query<{ proname: string; prosrc: string }>(
    `SELECT p.proname, p.prosrc FROM pg_catalog.pg_proc p
        JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
      WHERE n.nspname = $1 AND p.proname = ANY($2::text[])`,
    [schema, functions.map((fn) => fn.name)],
  );
  const stored = new Map<string, string[]>();
  for (const row of rows) stored.set(row.proname, [...(stored.get(row.proname) ?? []), row.prosrc]);
  for (const fn of functions) {
    if (stored.get(fn.name)?.includes(fn.body) === true) continue;
    await db.query(fn.create);
  }
}
