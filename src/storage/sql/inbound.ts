/**
 * `SqlInbound`: the inbound rows of a record store ({@link InboundStore}) written once for
 * every SQL database, on the {@link SqlDialect} and {@link SqlClient} the record store runs
 * on: MO messages with their webhooks, the parts of long ones, and the opt-out list. Each
 * storage names its own three tables ({@link SqlInboundTables}), so a database whose tables
 * an earlier version made keeps them.
 *
 * @module
 */
import type { CallbackListQuery } from '../callback-list.js';
import type { ClaimOptions } from '../claim-options.js';
import type { InboundInsertOptions, InboundPart, InboundRecord, InboundStorage, OptOutEntry, OptOutKey } from '../inbound-record.js';
import type { InboundRow, InboundStore, InboundWrite } from '../inbound-store.js';
import { INBOUND_COLUMNS, optOutOf, recordOf } from '../inbound-rows.js';
import type { ErasableInbound } from '../../lifecycle/erase-record.js';
import { limitClause, type SqlClient, type SqlDialect, type SqlSession } from './dialect.js';
import { webhookRows } from './inbound-recovery.js';
import type { SqlInboundTables } from './inbound-schema.js';
import { chunks, tuple } from './rows.js';

/**
 * Rows one statement of a purge or a lookup names at most: a short transaction however much
 * has aged (on SQLite, which runs on the event loop, about a millisecond), and well under
 * every driver's parameter limit.
 */
const CHUNK = 100;

/** A webhook that is still to be sent: a purge leaves its message. */
const NOT_PENDING = "(cb_state IS NULL OR cb_state <> 'pending')";

/** The part a row of the parts table stands for. */
function partOf(row: Record<string, unknown>): InboundPart {
  return {
    key: row.msg_key as string,
    seq: Number(row.seq),
    total: Number(row.total),
    text: row.text as string,
    receivedAt: Number(row.received_at),
  };
}

/** Inbound messages and opt-outs in SQL tables (see the module's TSDoc). */
export class SqlInbound implements InboundStore {
  /** `LIMIT ?` as the dialect writes it. */
  readonly #limit: string;

  /** The rows on `client` speaking `dialect`, in tables `t`; `ready` (the storage's) is awaited before each step. */
  constructor(
    protected readonly client: SqlClient,
    protected readonly dialect: SqlDialect,
    protected readonly t: SqlInboundTables,
    protected readonly ready: () => Promise<void>,
  ) {
    this.#limit = limitClause(dialect);
  }

  /** See {@link InboundStore.listWebhooks}: along the index of the principal and the state (sql/inbound-recovery.ts). */
  async listWebhooks(query: CallbackListQuery): Promise<InboundRow[]> {
    await this.ready();
    return webhookRows(this.client, this.dialect, this.t, query);
  }

  /** Runs `sql` (with `?` placeholders) on `session`, the pool by default. */
  #run(sql: string, params: readonly unknown[] = [], session: SqlSession = this.client) {
    return session.run(this.dialect.placeholders(sql), params);
  }

  /** See {@link InboundStore.insert}: one transaction, the newest message of its sender to its recipient read first when `once` asks. */
  async insert(m: InboundRecord, options: InboundInsertOptions): Promise<{ optOutChanged: boolean; duplicate?: true }> {
    await this.ready();
    const { inbound, id } = this.t;
    const { once, optOut, lease } = options;
    return this.client.transaction(async (tx): Promise<{ optOutChanged: boolean; duplicate?: true }> => {
      if (once !== undefined) {
        const { rows } = await this.#run(
          `SELECT once_key, received_at FROM ${inbound} WHERE to_address = ? AND from_number = ? ORDER BY received_at DESC, ${id} DESC LIMIT 1`,
          [m.to, m.from],
          tx,
        );
        const newest = rows[0];
        if (newest !== undefined && newest.once_key === once.key && Number(newest.received_at) >= once.since) {
          return { optOutChanged: false, duplicate: true };
        }
      }
      await this.#run(
        `INSERT INTO ${inbound} (ref, principal_id, profile_code, from_number, to_address, text, received_at, callback_url,
          callback_secret, uid, cb_state, cb_attempts, cb_next_attempt_at, lease_owner, lease_until, once_key) VALUES ${tuple(16)}`,
        [
          m.ref, m.principalId, m.profileCode, m.from, m.to, m.text, m.receivedAt, m.callbackUrl, m.callbackSecret, m.uid,
          m.callback?.state ?? null, 0, m.callback?.nextAttemptAt ?? null, lease?.owner ?? null, lease?.until ?? null, once?.key ?? null,
        ],
        tx,
      );
      if (optOut === undefined) return { optOutChanged: false };
      return { optOutChanged: await this.#setOptOut({ shortCode: m.to, number: m.from }, optOut, m.receivedAt, tx) };
    });
  }

  /**
   * Stores (or replaces) one part of a long message and returns every part stored under its
   * key, in a transaction holding the key's lock: of two parts of one message stored at once,
   * on any instance, the later sees the earlier.
   */
  async storeInboundPart(part: InboundPart): Promise<InboundPart[]> {
    await this.ready();
    const { parts } = this.t;
    return this.client.lockedTransaction(part.key, async (tx) => {
      await this.#run(`DELETE FROM ${parts} WHERE msg_key = ? AND seq = ?`, [part.key, part.seq], tx);
      await this.#run(
        `INSERT INTO ${parts} (msg_key, seq, total, text, received_at) VALUES ${tuple(5)}`,
        [part.key, part.seq, part.total, part.text, part.receivedAt],
        tx,
      );
      const { rows } = await this.#run(`SELECT msg_key, seq, total, text, received_at FROM ${parts} WHERE msg_key = ? ORDER BY seq`, [part.key], tx);
      return rows.map(partOf);
    });
  }

  /** See {@link InboundStore.claim}: instances skip each other's (`SKIP LOCKED`). */
  async claim({ owner, limit, leaseMs, now }: ClaimOptions): Promise<InboundRecord[]> {
    await this.ready();
    if (limit <= 0) return [];
    const { inbound, id, dueIndex } = this.t;
    return this.client.transaction(async (tx) => {
      const { rows } = await this.#run(
        `SELECT ${id} AS row_id, ${INBOUND_COLUMNS} FROM ${inbound}${this.dialect.forceIndex(dueIndex)}
          WHERE cb_state = 'pending' AND cb_next_attempt_at <= ? AND (lease_until IS NULL OR lease_until <= ?)
          ORDER BY cb_next_attempt_at, ${id} ${this.#limit} ${this.dialect.lockSkipLocked}`,
        [now, now, limit],
        tx,
      );
      if (rows.length === 0) return [];
      await this.#run(
        `UPDATE ${inbound} SET lease_owner = ?, lease_until = ? WHERE ${id} IN ${tuple(rows.length)}`,
        [owner, now + leaseMs, ...rows.map((row) => row.row_id)],
        tx,
      );
      return rows.map(recordOf);
    });
  }

  /** See {@link InboundStorage.deferInbound}. */
  async deferInbound(uids: readonly string[], until: number): Promise<void> {
    await this.ready();
    for (const slice of chunks(uids, CHUNK)) {
      await this.#run(`UPDATE ${this.t.inbound} SET lease_until = ? WHERE uid IN ${tuple(slice.length)}`, [until, ...slice]);
    }
  }

  /** See {@link InboundStore.find}. */
  async find(key: 'ref' | 'uid', values: readonly string[]): Promise<InboundRecord[]> {
    await this.ready();
    const found: InboundRecord[] = [];
    for (const slice of chunks(values, CHUNK)) {
      const { rows } = await this.#run(`SELECT ${INBOUND_COLUMNS} FROM ${this.t.inbound} WHERE ${key} IN ${tuple(slice.length)}`, slice);
      found.push(...rows.map(recordOf));
    }
    return found;
  }

  /** See {@link InboundStore.write}: one statement per write, each comparing the state and attempts it read. */
  async write(writes: readonly InboundWrite[]): Promise<boolean[]> {
    await this.ready();
    const applied: boolean[] = [];
    for (const { uid, callback: cb, expected } of writes) {
      const { affected } = await this.#run(
        `UPDATE ${this.t.inbound} SET cb_state = ?, cb_attempts = ?, cb_last_status_code = ?, cb_last_error = ?, cb_next_attempt_at = ?,
          cb_restarted_after = ?, lease_owner = NULL, lease_until = NULL WHERE uid = ? AND cb_state = ? AND cb_attempts = ?`,
        [cb.state, cb.attempts, cb.lastStatusCode, cb.lastError, cb.nextAttemptAt, cb.restartedAfter ?? null, uid, expected.state, expected.attempts],
      );
      applied.push(affected > 0);
    }
    return applied;
  }

  /** See {@link InboundStorage.listInbound}. */
  async listInbound(options: { principalId?: string; limit: number }): Promise<InboundRecord[]> {
    await this.ready();
    const { inbound, id } = this.t;
    const mine = options.principalId === undefined ? '' : 'WHERE principal_id = ?';
    const { rows } = await this.#run(
      `SELECT ${INBOUND_COLUMNS} FROM ${inbound} ${mine} ORDER BY received_at DESC, ${id} DESC ${this.#limit}`,
      [...(options.principalId === undefined ? [] : [options.principalId]), Math.max(0, options.limit)],
    );
    return rows.map(recordOf);
  }

  /**
   * Deletes up to `limit` messages received before `before` whose webhook is not pending,
   * and every part received before it, {@link CHUNK} rows per statement: each a short
   * transaction, read first and then deleted by key (not every database limits a `DELETE`),
   * the delete repeating the condition in case a row changed between. The parts are not
   * bounded by `limit`: the retention sweep calls again only while messages fill it, so parts
   * left behind would outlive their messages.
   */
  async purgeInbound(before: number, limit: number): Promise<number> {
    await this.ready();
    const { inbound, parts, id } = this.t;
    for (;;) {
      const { rows } = await this.#run(`SELECT msg_key, seq FROM ${parts} WHERE received_at < ? ORDER BY received_at ${this.#limit}`, [before, CHUNK]);
      if (rows.length === 0) break;
      await this.#run(
        `DELETE FROM ${parts} WHERE received_at < ? AND (${rows.map(() => '(msg_key = ? AND seq = ?)').join(' OR ')})`,
        [before, ...rows.flatMap((row) => [row.msg_key, row.seq])],
      );
      if (rows.length < CHUNK) break;
    }
    let deleted = 0;
    while (deleted < limit) {
      const n = Math.min(CHUNK, limit - deleted);
      const { rows } = await this.#run(
        `SELECT ${id} AS row_id FROM ${inbound} WHERE received_at < ? AND ${NOT_PENDING} ORDER BY received_at, ${id} ${this.#limit}`,
        [before, n],
      );
      if (rows.length === 0) break;
      const { affected } = await this.#run(
        `DELETE FROM ${inbound} WHERE ${id} IN ${tuple(rows.length)} AND received_at < ? AND ${NOT_PENDING}`,
        [...rows.map((row) => row.row_id), before],
      );
      deleted += affected;
      if (rows.length < n) break;
    }
    return deleted;
  }

  /**
   * See {@link InboundStore.erase}: up to `limit` messages from `from`, read by key (a scan of
   * the table, which retention bounds: no index serves the sender alone) then written, the
   * sender repeated in case a row changed between.
   */
  async erase(from: string, limit: number, erased: ErasableInbound): Promise<number> {
    await this.ready();
    const { inbound, id } = this.t;
    const { rows } = await this.#run(`SELECT ${id} AS row_id FROM ${inbound} WHERE from_number = ? ORDER BY ${id} ${this.#limit}`, [from, Math.min(CHUNK, limit)]);
    if (rows.length === 0) return 0;
    const { affected } = await this.#run(
      `UPDATE ${inbound} SET from_number = ?, text = ?, once_key = NULL WHERE ${id} IN ${tuple(rows.length)} AND from_number = ?`,
      [erased.from, erased.text, ...rows.map((row) => row.row_id), from],
    );
    return affected;
  }

  /** Adds (`optedOut`) or removes the entry of `key` on `session`; whether the list changed. */
  async #setOptOut(key: OptOutKey, optedOut: boolean, at: number, session: SqlSession = this.client): Promise<boolean> {
    const { optOuts } = this.t;
    const { affected } = optedOut
      ? await this.#run(this.dialect.insertIgnore(optOuts, 'short_code, number, created_at', tuple(3)), [key.shortCode, key.number, at], session)
      : await this.#run(`DELETE FROM ${optOuts} WHERE short_code = ? AND number = ?`, [key.shortCode, key.number], session);
    return affected > 0;
  }

  /** See {@link InboundStorage.setOptOut}. */
  async setOptOut(key: OptOutKey, optedOut: boolean, at: number): Promise<boolean> {
    await this.ready();
    return this.#setOptOut(key, optedOut, at);
  }

  /**
   * Whether each key's number is opted out of its short code. The keys go by short code, as
   * `short_code = ? AND number IN (...)`: one range of the key, where an `OR` of a condition
   * per key cost MariaDB's planner more than the lookup (100 keys: 10 ms against 1). A
   * request's messages mostly share their sender, so it is one statement per {@link CHUNK}
   * numbers, and a lone key's (the most frequent call) is built once.
   */
  async findOptOuts(keys: readonly OptOutKey[]): Promise<boolean[]> {
    await this.ready();
    if (keys.length === 1) {
      const { rows } = await this.client.run(this.#findStatement([1]), [keys[0]!.shortCode, keys[0]!.number]);
      return [rows.length > 0];
    }
    const byCode = new Map<string, string[]>();
    for (const key of keys) {
      const numbers = byCode.get(key.shortCode);
      if (numbers === undefined) byCode.set(key.shortCode, [key.number]);
      else numbers.push(key.number);
    }
    const found = new Set<string>();
    let shape: number[] = [];
    let params: string[] = [];
    const lookUp = async (): Promise<void> => {
      const { rows } = await this.client.run(this.#findStatement(shape), params);
      for (const row of rows) found.add(`${row.short_code as string}\n${row.number as string}`);
      shape = [];
      params = [];
    };
    for (const [code, numbers] of byCode) {
      for (let start = 0; start < numbers.length; start += CHUNK) {
        const slice = numbers.slice(start, start + CHUNK);
        if (params.length - shape.length + slice.length > CHUNK) await lookUp();
        shape.push(slice.length);
        params.push(code, ...slice);
      }
    }
    if (shape.length > 0) await lookUp();
    return keys.map((key) => found.has(`${key.shortCode}\n${key.number}`));
  }

  /** The statements of {@link findOptOuts}, by their shape (how many numbers of each short code). */
  readonly #findStatements = new Map<string, string>();

  /** The opt-out entries of one short code and `shape[i]` numbers for each `i` (a `short_code` parameter, then its numbers), in the dialect's placeholders. */
  #findStatement(shape: readonly number[]): string {
    const name = shape.join(',');
    let sql = this.#findStatements.get(name);
    if (sql === undefined) {
      const codes = shape.map((count) => `(short_code = ? AND number IN ${tuple(count)})`).join(' OR ');
      sql = this.dialect.placeholders(`SELECT short_code, number FROM ${this.t.optOuts} WHERE ${codes}`);
      // Mixed short codes make shapes without end: a bound, past which they are built again.
      if (this.#findStatements.size >= 1_000) this.#findStatements.clear();
      this.#findStatements.set(name, sql);
    }
    return sql;
  }

  /** The list, by short code then number, all of it or one short code's, from after `after`. */
  async listOptOuts(options: { shortCode?: string; limit: number; after?: OptOutKey }): Promise<OptOutEntry[]> {
    await this.ready();
    const where: string[] = [];
    const params: unknown[] = [];
    if (options.shortCode !== undefined) {
      where.push('short_code = ?');
      params.push(options.shortCode);
    }
    if (options.after !== undefined) {
      where.push('(short_code > ? OR (short_code = ? AND number > ?))');
      params.push(options.after.shortCode, options.after.shortCode, options.after.number);
    }
    const { rows } = await this.#run(
      `SELECT short_code, number, created_at FROM ${this.t.optOuts} ${where.length === 0 ? '' : `WHERE ${where.join(' AND ')}`}
        ORDER BY short_code, number ${this.#limit}`,
      [...params, Math.max(0, options.limit)],
    );
    return rows.map(optOutOf);
  }
}
