/**
 * The PostgreSQL storage's inbound part ({@link InboundStorage}): MO messages with their
 * webhooks (table `inbound`) and the opt-out list (`opt_outs`), from the migration that made
 * them ({@link createInboundTables}). Each step is one statement, so one round trip and atomic; claims take
 * `FOR UPDATE SKIP LOCKED` with leases, as the report claims do.
 *
 * @module
 */
import type { Pool } from 'pg';
import type { SqlSession } from '../sql/dialect.js';
import type { CallbackAttempt, ClaimOptions } from '../contract.js';
import type {
  DueInbound,
  InboundInsertOptions,
  InboundPart,
  InboundRecord,
  InboundStorage,
  NewInbound,
  OptOutEntry,
  OptOutKey,
} from '../inbound-record.js';
import { inboundFromRow, optOutFromRow, type InboundColumns, type OptOutColumns } from '../inbound-rows.js';

/** A row of `inbound` (int8 columns come back as strings). */
interface InboundRow extends InboundColumns {
  seq: string;
}

/** First key of the two-key advisory lock a message's parts are stored under: "SMMO" in ASCII. */
const PART_LOCK_NAMESPACE = 0x534d4d4f;

/** Parts one statement of a purge deletes at most: a short transaction, however many have aged. */
const PARTS_PURGE_CHUNK = 1000;

/** A row of `inbound_parts`. */
interface PartRow {
  msg_key: string;
  seq: number;
  total: number;
  text: string;
  received_at: string;
}

/**
 * Creates the inbound tables in quoted schema `s` if missing, as the earlier adapter's
 * migrations 8 and 11 made them (a schema it made keeps them as they are): `inbound` (a
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
    `CREATE INDEX IF NOT EXISTS inbound_due_idx ON ${s}.inbound (cb_next_attempt_at, seq) WHERE cb_state = 'pending'`,
    `CREATE INDEX IF NOT EXISTS inbound_principal_idx ON ${s}.inbound (principal_id, received_at DESC, seq DESC)`,
    `CREATE INDEX IF NOT EXISTS inbound_received_idx ON ${s}.inbound (received_at, seq)`,
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

/** The SQL of the inbound steps; `s` is the quoted schema name. */
function statements(s: string) {
  const inbound = `${s}.inbound`;
  const optOuts = `${s}.opt_outs`;
  const parts = `${s}.inbound_parts`;
  return {
    // One statement: the message, its webhook and the opt-out change commit together, or
    // none of them when the newest message of this sender to this recipient has the same
    // redelivery key ($16) and came at or after $17. A data-modifying WITH runs whether or not
    // the main query reads it.
    insert: `
      WITH newest AS (
        SELECT once_key, received_at FROM ${inbound} WHERE to_address = $5 AND from_number = $4
        ORDER BY received_at DESC, seq DESC LIMIT 1),
      dup AS (SELECT 1 FROM newest WHERE $16::text IS NOT NULL AND once_key = $16::text AND received_at >= $17::bigint),
      stored AS (
        INSERT INTO ${inbound} (ref, principal_id, profile_code, from_number, to_address, text, received_at,
          callback_url, callback_secret, uid, cb_state, cb_next_attempt_at, lease_owner, lease_until, once_key)
        SELECT $1::text, $2::text, $3::text, $4::text, $5::text, $6::text, $7::bigint, $8::text, $9::text, $10::text,
          $11::text, $12::bigint, $13::text, $14::bigint, $16::text
        WHERE NOT EXISTS (SELECT 1 FROM dup)),
      opted_out AS (
        INSERT INTO ${optOuts} (short_code, number, created_at) SELECT $5, $4, $7 WHERE $15::text = 'out' AND NOT EXISTS (SELECT 1 FROM dup)
        ON CONFLICT DO NOTHING RETURNING 1),
      opted_in AS (
        DELETE FROM ${optOuts} WHERE $15::text = 'in' AND short_code = $5 AND number = $4 AND NOT EXISTS (SELECT 1 FROM dup)
        RETURNING 1)
      SELECT (SELECT count(*) FROM opted_out) + (SELECT count(*) FROM opted_in) AS changed, EXISTS (SELECT 1 FROM dup) AS duplicate`,
    // Taken first in the part's transaction, so the parts of one message are stored one at a time.
    partLock: `SELECT pg_advisory_xact_lock(${PART_LOCK_NAMESPACE}, hashtext($1))`,
    // Its snapshot is taken once the lock is held: it sees every part committed before.
    storePart: `
      WITH stored AS (
        INSERT INTO ${parts} (msg_key, seq, total, text, received_at) VALUES ($1, $2, $3, $4, $5)
        ON CONFLICT (msg_key, seq) DO UPDATE SET total = EXCLUDED.total, text = EXCLUDED.text, received_at = EXCLUDED.received_at
        RETURNING msg_key, seq, total, text, received_at)
      SELECT * FROM stored
      UNION ALL SELECT msg_key, seq, total, text, received_at FROM ${parts} WHERE msg_key = $1 AND seq <> $2`,
    purgeParts: `
      DELETE FROM ${parts} WHERE (msg_key, seq) IN (SELECT msg_key, seq FROM ${parts}
        WHERE received_at < $1 ORDER BY received_at LIMIT $2 FOR UPDATE SKIP LOCKED)`,
    claim: `
      WITH due AS (
        SELECT seq FROM ${inbound}
        WHERE cb_state = 'pending' AND cb_next_attempt_at <= $3 AND (lease_until IS NULL OR lease_until <= $3)
        ORDER BY cb_next_attempt_at, seq LIMIT $4 FOR UPDATE SKIP LOCKED)
      UPDATE ${inbound} i SET lease_owner = $1, lease_until = $2 FROM due WHERE i.seq = due.seq RETURNING i.*`,
    defer: `UPDATE ${inbound} SET lease_until = $1 WHERE uid = ANY($2::text[]) AND cb_state = 'pending'`,
    attempt: `
      UPDATE ${inbound} SET cb_state = $1, cb_attempts = cb_attempts + 1, cb_last_status_code = $2, cb_last_error = $3,
        cb_next_attempt_at = $4, lease_owner = NULL, lease_until = NULL
      WHERE uid = $5 AND cb_state = 'pending'`,
    newest: `SELECT * FROM ${inbound} ORDER BY received_at DESC, seq DESC LIMIT $1`,
    newestOf: `SELECT * FROM ${inbound} WHERE principal_id = $1 ORDER BY received_at DESC, seq DESC LIMIT $2`,
    purge: `
      DELETE FROM ${inbound} WHERE seq IN (SELECT seq FROM ${inbound}
        WHERE received_at < $1 AND (cb_state IS NULL OR cb_state <> 'pending') ORDER BY received_at, seq LIMIT $2
        FOR UPDATE SKIP LOCKED)`,
    optOut: `INSERT INTO ${optOuts} (short_code, number, created_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
    optIn: `DELETE FROM ${optOuts} WHERE short_code = $1 AND number = $2`,
    find: `
      SELECT k.i, o.short_code IS NOT NULL AS opted_out
      FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS k(short_code, number, i)
      LEFT JOIN ${optOuts} o ON o.short_code = k.short_code AND o.number = k.number ORDER BY k.i`,
    list: `
      SELECT short_code, number, created_at FROM ${optOuts}
      WHERE ($1::text IS NULL OR short_code = $1)
        AND ($2::text IS NULL OR short_code > $2 OR (short_code = $2 AND number > $3))
      ORDER BY short_code, number LIMIT $4`,
  };
}

/** Inbound messages and opt-outs in the storage's schema. */
export class PostgresInbound implements InboundStorage {
  readonly #pool: Pool;
  readonly #ready: () => Promise<void>;
  readonly #sql: ReturnType<typeof statements>;

  /** `schema` is quoted; `ready` brings the schema up to date (the storage's `ready()`). */
  constructor(pool: Pool, schema: string, ready: () => Promise<void>) {
    this.#pool = pool;
    this.#ready = ready;
    this.#sql = statements(schema);
  }

  /** Stores the message with its webhook (due at once) and the opt-out change, in one statement. */
  async insertInbound(m: NewInbound, options: InboundInsertOptions = {}): Promise<{ optOutChanged: boolean; duplicate?: true }> {
    await this.#ready();
    const hook = m.callbackUrl !== null && m.uid !== null;
    const lease = hook ? options.lease : undefined;
    const op = options.optOut === undefined ? null : options.optOut ? 'out' : 'in';
    const { rows } = await this.#pool.query<{ changed: string; duplicate: boolean }>(this.#sql.insert, [
      m.ref, m.principalId, m.profileCode, m.from, m.to, m.text, m.receivedAt, m.callbackUrl, m.callbackSecret, m.uid,
      hook ? 'pending' : null, hook ? m.receivedAt : null, lease?.owner ?? null, lease?.until ?? null, op,
      options.once?.key ?? null, options.once?.since ?? null,
    ]);
    if (rows[0]?.duplicate === true) return { optOutChanged: false, duplicate: true };
    return { optOutChanged: Number(rows[0]?.changed ?? 0) > 0 };
  }

  /** Stores (or replaces) one part of a long message and returns every part stored under its key, in one transaction. */
  async storeInboundPart(part: InboundPart): Promise<InboundPart[]> {
    await this.#ready();
    const client = await this.#pool.connect();
    // A connection whose rollback failed is in an unknown state: the pool drops it.
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      await client.query(this.#sql.partLock, [part.key]);
      const { rows } = await client.query<PartRow>(this.#sql.storePart, [part.key, part.seq, part.total, part.text, part.receivedAt]);
      await client.query('COMMIT');
      return rows
        .map((row) => ({ key: row.msg_key, seq: row.seq, total: row.total, text: row.text, receivedAt: Number(row.received_at) }))
        .sort((a, b) => a.seq - b.seq);
    } catch (error) {
      await client.query('ROLLBACK').catch((rollback: unknown) => {
        broken = rollback instanceof Error ? rollback : new Error(String(rollback));
      });
      throw error;
    } finally {
      client.release(broken);
    }
  }

  /** Leases up to `limit` due pending webhooks, oldest due first; instances skip each other's. */
  async claimInbound(options: ClaimOptions): Promise<DueInbound[]> {
    await this.#ready();
    if (options.limit <= 0) return [];
    const { rows } = await this.#pool.query<InboundRow>(this.#sql.claim, [
      options.owner, options.now + options.leaseMs, options.now, options.limit,
    ]);
    rows.sort((a, b) => Number(a.cb_next_attempt_at) - Number(b.cb_next_attempt_at) || Number(a.seq) - Number(b.seq));
    return rows.map((row) => ({ uid: row.uid!, attempts: row.cb_attempts, inbound: inboundFromRow(row) }));
  }

  /** Makes claimed pending webhooks claimable again at `until`. */
  async deferInbound(uids: readonly string[], until: number): Promise<void> {
    await this.#ready();
    if (uids.length > 0) await this.#pool.query(this.#sql.defer, [until, uids]);
  }

  /** Records one attempt and ends the lease; ignored once the webhook is finished. */
  async recordInboundAttempt(uid: string, attempt: CallbackAttempt): Promise<void> {
    await this.#ready();
    const retry = attempt.result === 'retry';
    await this.#pool.query(this.#sql.attempt, [
      retry ? 'pending' : attempt.result, attempt.statusCode, attempt.error, retry ? (attempt.nextAttemptAt ?? attempt.now) : null, uid,
    ]);
  }

  /** Inbound messages, newest first. */
  async listInbound(options: { principalId?: string; limit: number }): Promise<InboundRecord[]> {
    await this.#ready();
    const limit = Math.max(0, options.limit);
    const { rows } =
      options.principalId === undefined
        ? await this.#pool.query<InboundRow>(this.#sql.newest, [limit])
        : await this.#pool.query<InboundRow>(this.#sql.newestOf, [options.principalId, limit]);
    return rows.map(inboundFromRow);
  }

  /**
   * Deletes up to `limit` messages received before `before` whose webhook is not pending,
   * and every part received before it, {@link PARTS_PURGE_CHUNK} at a time. The parts are not
   * bounded by `limit`: the retention sweep calls again only while messages fill it, so parts
   * left behind would outlive their messages.
   */
  async purgeInbound(before: number, limit: number): Promise<number> {
    await this.#ready();
    let purgedParts: number;
    do purgedParts = (await this.#pool.query(this.#sql.purgeParts, [before, PARTS_PURGE_CHUNK])).rowCount ?? 0;
    while (purgedParts >= PARTS_PURGE_CHUNK);
    if (limit <= 0) return 0;
    return (await this.#pool.query(this.#sql.purge, [before, limit])).rowCount ?? 0;
  }

  /** Opts a number out of a short code, or back in; whether the list changed. */
  async setOptOut(key: OptOutKey, optedOut: boolean, at: number): Promise<boolean> {
    await this.#ready();
    const result = optedOut
      ? await this.#pool.query(this.#sql.optOut, [key.shortCode, key.number, at])
      : await this.#pool.query(this.#sql.optIn, [key.shortCode, key.number]);
    return (result.rowCount ?? 0) > 0;
  }

  /** Whether each key's number is opted out of its short code: one statement for all. */
  async findOptOuts(keys: readonly OptOutKey[]): Promise<boolean[]> {
    await this.#ready();
    if (keys.length === 0) return [];
    const { rows } = await this.#pool.query<{ opted_out: boolean }>(this.#sql.find, [
      keys.map((k) => k.shortCode), keys.map((k) => k.number),
    ]);
    return rows.map((row) => row.opted_out);
  }

  /** The list, by short code then number, from after `after`. */
  async listOptOuts(options: { shortCode?: string; limit: number; after?: OptOutKey }): Promise<OptOutEntry[]> {
    await this.#ready();
    const { rows } = await this.#pool.query<OptOutColumns>(this.#sql.list, [
      options.shortCode ?? null, options.after?.shortCode ?? null, options.after?.number ?? '', Math.max(0, options.limit),
    ]);
    return rows.map(optOutFromRow);
  }
}
