/**
 * The SQLite storage's inbound part ({@link InboundStorage}): MO messages with their webhooks
 * (table `sms_inbound`) and the opt-out list (`sms_opt_outs`), from the migration that made
 * them (migrations.ts). Writes share the storage's group commit; the SQL of each step is here,
 * prepared once on first use.
 *
 * @module
 */
import type Database from 'better-sqlite3';
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
import type { WriteGroup } from './client.js';
import { purgeInChunks } from './in-chunks.js';

/** A row of `sms_inbound`. */
interface InboundRow extends InboundColumns {
  id: number;
}

/** A row of `sms_inbound_parts`. */
interface PartRow {
  msg_key: string;
  seq: number;
  total: number;
  text: string;
  received_at: number;
}

/** The statements of the inbound steps. */
function prepare(db: Database.Database) {
  return {
    insert: db.prepare(`
      INSERT INTO sms_inbound (ref, principal_id, profile_code, from_number, to_address, text, received_at,
        callback_url, callback_secret, uid, cb_state, cb_next_attempt_at, lease_owner, lease_until, once_key)
      VALUES (@ref, @principalId, @profileCode, @from, @to, @text, @receivedAt, @callbackUrl, @callbackSecret, @uid,
        @state, @next, @owner, @until, @onceKey)`),
    newestBetween: db.prepare<[string, string], { once_key: string | null; received_at: number }>(`
      SELECT once_key, received_at FROM sms_inbound WHERE to_address = ? AND from_number = ?
      ORDER BY received_at DESC, id DESC LIMIT 1`),
    storePart: db.prepare<[string, number, number, string, number]>(`
      INSERT INTO sms_inbound_parts (msg_key, seq, total, text, received_at) VALUES (?, ?, ?, ?, ?)
      ON CONFLICT (msg_key, seq) DO UPDATE SET total = excluded.total, text = excluded.text, received_at = excluded.received_at`),
    parts: db.prepare<[string], PartRow>('SELECT * FROM sms_inbound_parts WHERE msg_key = ? ORDER BY seq'),
    purgeParts: db.prepare<[number, number]>(`
      DELETE FROM sms_inbound_parts WHERE (msg_key, seq) IN (SELECT msg_key, seq FROM sms_inbound_parts
        WHERE received_at < ? ORDER BY received_at LIMIT +?)`),
    due: db.prepare<{ now: number; limit: number }, InboundRow>(`
      SELECT * FROM sms_inbound
      WHERE cb_state = 'pending' AND cb_next_attempt_at <= @now AND (lease_until IS NULL OR lease_until <= @now)
      ORDER BY cb_next_attempt_at, id LIMIT +@limit`),
    lease: db.prepare<[string, number, number]>('UPDATE sms_inbound SET lease_owner = ?, lease_until = ? WHERE id = ?'),
    defer: db.prepare<[number, string]>(`UPDATE sms_inbound SET lease_until = ? WHERE uid = ? AND cb_state = 'pending'`),
    attempt: db.prepare<[string, number | null, string | null, number | null, string]>(`
      UPDATE sms_inbound SET cb_state = ?, cb_attempts = cb_attempts + 1, cb_last_status_code = ?, cb_last_error = ?,
        cb_next_attempt_at = ?, lease_owner = NULL, lease_until = NULL
      WHERE uid = ? AND cb_state = 'pending'`),
    newest: db.prepare<[number], InboundRow>('SELECT * FROM sms_inbound ORDER BY received_at DESC, id DESC LIMIT +?'),
    newestOf: db.prepare<[string, number], InboundRow>(
      'SELECT * FROM sms_inbound WHERE principal_id = ? ORDER BY received_at DESC, id DESC LIMIT +?',
    ),
    purge: db.prepare<[number, number]>(`
      DELETE FROM sms_inbound WHERE id IN (SELECT id FROM sms_inbound
        WHERE received_at < ? AND (cb_state IS NULL OR cb_state <> 'pending') ORDER BY received_at, id LIMIT +?)`),
    optOut: db.prepare<[string, string, number]>('INSERT OR IGNORE INTO sms_opt_outs (short_code, number, created_at) VALUES (?, ?, ?)'),
    optIn: db.prepare<[string, string]>('DELETE FROM sms_opt_outs WHERE short_code = ? AND number = ?'),
    isOptedOut: db.prepare<[string, string], { one: number }>('SELECT 1 AS one FROM sms_opt_outs WHERE short_code = ? AND number = ?'),
    listOptOuts: db.prepare<{ code: string | null; afterCode: string | null; afterNumber: string; limit: number }, OptOutColumns>(`
      SELECT * FROM sms_opt_outs
      WHERE (@code IS NULL OR short_code = @code)
        AND (@afterCode IS NULL OR short_code > @afterCode OR (short_code = @afterCode AND number > @afterNumber))
      ORDER BY short_code, number LIMIT +@limit`),
  };
}

/** Inbound messages and opt-outs in the storage's SQLite database. */
export class SqliteInbound implements InboundStorage {
  readonly #db: () => Promise<Database.Database>;
  readonly #commits: WriteGroup;
  #statements: ReturnType<typeof prepare> | undefined;

  /** `db` resolves with the database once its schema is ready (the storage's `ready()`). */
  constructor(db: () => Promise<Database.Database>, commits: WriteGroup) {
    this.#db = db;
    this.#commits = commits;
  }

  async #s(): Promise<ReturnType<typeof prepare>> {
    const db = await this.#db();
    return (this.#statements ??= prepare(db));
  }

  /** Stores the message with its webhook (due at once) and the opt-out change, in one commit, unless it repeats the newest. */
  async insertInbound(message: NewInbound, options: InboundInsertOptions = {}): Promise<{ optOutChanged: boolean; duplicate?: true }> {
    const s = await this.#s();
    const m = { ...message };
    const hook = m.callbackUrl !== null && m.uid !== null;
    const { lease, once } = options;
    return this.#commits.run((): { optOutChanged: boolean; duplicate?: true } => {
      if (once !== undefined) {
        const newest = s.newestBetween.get(m.to, m.from);
        if (newest !== undefined && newest.once_key === once.key && newest.received_at >= once.since) {
          return { optOutChanged: false, duplicate: true };
        }
      }
      s.insert.run({
        onceKey: once?.key ?? null,
        ...m,
        state: hook ? 'pending' : null,
        next: hook ? m.receivedAt : null,
        owner: hook ? (lease?.owner ?? null) : null,
        until: hook ? (lease?.until ?? null) : null,
      });
      if (options.optOut === undefined) return { optOutChanged: false };
      const changes = options.optOut ? s.optOut.run(m.to, m.from, m.receivedAt).changes : s.optIn.run(m.to, m.from).changes;
      return { optOutChanged: changes > 0 };
    });
  }

  /** Stores (or replaces) one part of a long message and returns every part stored under its key, in one commit. */
  async storeInboundPart(part: InboundPart): Promise<InboundPart[]> {
    const s = await this.#s();
    return this.#commits.run(() => {
      s.storePart.run(part.key, part.seq, part.total, part.text, part.receivedAt);
      return s.parts.all(part.key).map((row) => ({
        key: row.msg_key, seq: row.seq, total: row.total, text: row.text, receivedAt: row.received_at,
      }));
    });
  }

  /** Leases up to `limit` due pending webhooks, oldest due first. */
  async claimInbound(options: ClaimOptions): Promise<DueInbound[]> {
    const s = await this.#s();
    return this.#commits.run(() => {
      const until = options.now + options.leaseMs;
      return s.due.all({ now: options.now, limit: Math.max(0, options.limit) }).map((row) => {
        s.lease.run(options.owner, until, row.id);
        return { uid: row.uid!, attempts: row.cb_attempts, inbound: inboundFromRow(row) };
      });
    });
  }

  /** Makes claimed pending webhooks claimable again at `until`. */
  async deferInbound(uids: readonly string[], until: number): Promise<void> {
    const s = await this.#s();
    await this.#commits.run(() => {
      for (const uid of uids) s.defer.run(until, uid);
    });
  }

  /** Records one attempt and ends the lease; ignored once the webhook is finished. */
  async recordInboundAttempt(uid: string, attempt: CallbackAttempt): Promise<void> {
    const s = await this.#s();
    const retry = attempt.result === 'retry';
    await this.#commits.run(() =>
      s.attempt.run(retry ? 'pending' : attempt.result, attempt.statusCode, attempt.error, retry ? (attempt.nextAttemptAt ?? attempt.now) : null, uid),
    );
  }

  /** Inbound messages, newest first. */
  async listInbound(options: { principalId?: string; limit: number }): Promise<InboundRecord[]> {
    const s = await this.#s();
    const limit = Math.max(0, options.limit);
    const rows = options.principalId === undefined ? s.newest.all(limit) : s.newestOf.all(options.principalId, limit);
    return rows.map(inboundFromRow);
  }

  /**
   * Deletes up to `limit` messages received before `before` whose webhook is not pending,
   * and every part received before it, in small transactions (in-chunks.ts). The parts are
   * not bounded by `limit`: the retention sweep calls again only while messages fill it, so
   * parts left behind would outlive their messages.
   */
  async purgeInbound(before: number, limit: number): Promise<number> {
    const s = await this.#s();
    await purgeInChunks(Number.POSITIVE_INFINITY, (n) => this.#commits.run(() => s.purgeParts.run(before, n).changes));
    return purgeInChunks(limit, (n) => this.#commits.run(() => s.purge.run(before, n).changes));
  }

  /** Opts a number out of a short code, or back in; whether the list changed. */
  async setOptOut(key: OptOutKey, optedOut: boolean, at: number): Promise<boolean> {
    const s = await this.#s();
    return this.#commits.run(() =>
      (optedOut ? s.optOut.run(key.shortCode, key.number, at) : s.optIn.run(key.shortCode, key.number)).changes > 0,
    );
  }

  /** Whether each key's number is opted out of its short code. */
  async findOptOuts(keys: readonly OptOutKey[]): Promise<boolean[]> {
    const s = await this.#s();
    return keys.map((key) => s.isOptedOut.get(key.shortCode, key.number) !== undefined);
  }

  /** The list, by short code then number, from after `after`. */
  async listOptOuts(options: { shortCode?: string; limit: number; after?: OptOutKey }): Promise<OptOutEntry[]> {
    const s = await this.#s();
    const rows = s.listOptOuts.all({
      code: options.shortCode ?? null,
      afterCode: options.after?.shortCode ?? null,
      afterNumber: options.after?.number ?? '',
      limit: Math.max(0, options.limit),
    });
    return rows.map(optOutFromRow);
  }
}
