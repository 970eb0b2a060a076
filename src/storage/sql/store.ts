/**
 * `SqlRecordStore`: the `RecordStore` primitives written once for every SQL database, on a
 * {@link SqlDialect} (the SQL text that differs) and a {@link SqlClient} (how statements and
 * transactions reach the database) that an adapter supplies. The queue reads and claims are
 * in queue.ts, the message list in list.ts, the insert guard and credit in guard.ts, the schema in schema.ts and the row
 * mapping in rows.ts.
 *
 * @module
 */
import type { ClaimOptions } from '../claim-options.js';
import type { QueueCount } from '../contract.js';
import type { IdempotencyRecord } from '../idempotency-record.js';
import type { InsertCounted, InsertGuard, InsertRefusal, MessageRow, MessageWrite, RecordStore, Timer } from '../record-store.js';
import { limitClause, type SqlClient, type SqlDialect, type SqlSession } from './dialect.js';
import { SqlContext } from './context.js';
import { addUnits, applyGuard, balanceOf, countedOf, GuardRefusal, purgeCounters } from './guard.js';
import { claimMessages, claimReports, countQueued, dueMessages, queueEnds } from './queue.js';
import {
  changedValues,
  chunks,
  maskedColumns,
  fromColumns,
  IDEMPOTENCY_COLUMNS,
  INSERTED_COLUMNS,
  ROW_COLUMNS,
  rowValues,
  sideCarrierIds,
  toIdempotency,
  tuple,
  WRITTEN_COLUMNS,
} from './rows.js';
import { createSchema, sqlTables, type Migration, type SqlTables } from './schema.js';
import { listCallbacks, listMessages } from './list.js';
import { readReports, reportKeyTerm, takeReportKey } from './report-log.js';
import type { ReportedRow } from '../record-store.js';
import { findByRecipient, rewriteIdempotency, scanIdempotency } from './erase.js';
import type { IdempotencyCursor } from '../erase-storage.js';
import type { MessageListQuery } from '../message-list.js';
import type { CallbackListQuery } from '../callback-list.js';

/** Rows per `INSERT` statement, and keys per `IN (...)` list: well under every driver's parameter and packet limits. */
const CHUNK = 200;

/** In an `UPDATE` text's key (`#updateText`): every column is set (else a mask of the changed ones). */
const ALL_COLUMNS = 1 << 30;
/** In an `UPDATE` text's key: the write also gives the row its report key. */
const REPORT_KEY = 1 << 29;

/**
 * The record-store primitives over SQL tables named `<prefix>messages`, `<prefix>carrier_ids`,
 * `<prefix>idempotency`, `<prefix>credit` and `<prefix>schema_version`. Adapters extend it
 * with their dialect and client, and give it the inbound (MO) group of `SqlInbound`
 * (inbound.ts) over tables of their own.
 */
export class SqlRecordStore implements RecordStore {
  /** The statements' context: client, dialect, table names and their prefix (a plain identifier, checked by the adapter). */
  protected readonly sql: SqlContext;
  readonly #ownSteps: readonly Migration[];
  /** The compare-and-set `UPDATE`s' texts by the columns they set (`#updateText`). */
  readonly #updates = new Map<number, string>();
  /** The lookup by carrier ids' text for each count of ids under 8. */
  readonly #byCarrierIds: string[] = [];
  #schema: Promise<void> | undefined;

  /**
   * A store over `client` speaking `dialect`, its tables named with `prefix`; `ownSteps`
   * are the adapter's own schema steps (its inbound tables), numbered from `OWN_STEPS_FROM`.
   */
  constructor(client: SqlClient, dialect: SqlDialect, prefix: string, ownSteps: readonly Migration[] = []) {
    this.sql = new SqlContext(client, dialect, sqlTables(dialect, prefix), prefix);
    this.#ownSteps = ownSteps;
  }

  /**
   * Creates the tables if needed, under the schema's database-wide lock, so that instances
   * starting together do it once (once per store; a failure is tried again at the next call).
   */
  ready(): Promise<void> {
    this.#schema ??= this.sql.client
      .exclusive(`${this.sql.prefix}schema`, (session) => this.createTables(session))
      .catch((error: unknown) => {
        this.#schema = undefined;
        throw error;
      });
    return this.#schema;
  }

  /** Creates the tables, or the schema steps they miss, on `session`, which holds the schema's lock. */
  protected createTables(session: SqlSession): Promise<void> {
    return createSchema(session, this.sql.dialect, this.sql.prefix, this.sql.tables, this.#ownSteps);
  }

  /** Waits for a schema change in flight. */
  async close(): Promise<void> {
    await this.#schema?.catch(() => undefined);
  }

  /** Stores `ids` of the row of `ref` in the side table (those already there stay); see `sideCarrierIds`. */
  async #insertCarrierIds(tx: SqlSession, rows: readonly { ref: string; ids: readonly string[] }[]): Promise<void> {
    const pairs = rows.flatMap((row) => row.ids.map((id) => [id, row.ref]));
    for (const slice of chunks(pairs, CHUNK)) {
      const values = slice.map(() => tuple(2)).join(', ');
      await this.sql.run(this.sql.dialect.insertIgnore(this.sql.tables.carrierIds, 'carrier_id, ref', values), slice.flat(), tx);
    }
  }

  /** `RecordStore.insertMessages`: one statement when it is alone, else one transaction. */
  async insertMessages(rows: readonly MessageRow[], guard?: InsertGuard): Promise<InsertRefusal | InsertCounted | undefined> {
    const insert = async (session: SqlSession) => {
      for (const slice of chunks(rows, CHUNK)) {
        const values = slice.map(() => tuple(WRITTEN_COLUMNS.length + 2)).join(', ');
        const params = slice.flatMap((row) => [row.record.ref, 0, ...rowValues(row)]);
        await this.sql.run(`INSERT INTO ${this.sql.tables.messages} (${INSERTED_COLUMNS}) VALUES ${values}`, params, session);
      }
      await this.#insertCarrierIds(session, rows.map((row) => ({ ref: row.record.ref, ids: sideCarrierIds(row) })));
    };
    const alone = guard === undefined && rows.length <= CHUNK && rows.every((row) => sideCarrierIds(row).length === 0);
    if (alone) {
      if (rows.length > 0) await insert(this.sql.client);
      return undefined;
    }
    try {
      const counted = await this.sql.client.transaction(async (tx) => {
        const values = guard === undefined ? undefined : await applyGuard(this.sql, tx, guard);
        await insert(tx);
        return values;
      });
      return counted === undefined ? undefined : { counted };
    } catch (error) {
      if (error instanceof GuardRefusal) return error.refusal;
      throw error;
    }
  }

  /** `RecordStore.getMessage`. */
  async getMessage(ref: string): Promise<MessageRow | null> {
    const [row] = await this.sql.messages(`SELECT ${ROW_COLUMNS} FROM ${this.sql.tables.messages} WHERE ref = ?`, [ref]);
    return row ?? null;
  }

  /** `RecordStore.findByExternalId`. */
  async findByExternalId(principalId: string, externalId: string, limit: number): Promise<MessageRow[]> {
    if (limit <= 0) return [];
    return this.sql.messages(
      `SELECT ${ROW_COLUMNS} FROM ${this.sql.tables.messages} WHERE principal_id = ? AND external_id = ?
        ORDER BY created_at DESC, seq DESC ${limitClause(this.sql.dialect)}`,
      [principalId, externalId, limit],
    );
  }

  /** `RecordStore.readReports` (report-log.ts). */
  readReports(principalId: string, after: number | null, limit: number): Promise<ReportedRow[]> {
    return readReports(this.sql, principalId, after, limit);
  }

  /** `RecordStore.listCallbacks` (list.ts). */
  listCallbacks(query: CallbackListQuery): Promise<MessageRow[]> {
    return listCallbacks(this.sql, query);
  }

  /** `RecordStore.listMessages` (list.ts). */
  listMessages(query: MessageListQuery): Promise<MessageRow[]> {
    return listMessages(this.sql, query);
  }

  /** `RecordStore.findByRecipient` (erase.ts). */
  findByRecipient(recipient: string, fromPrincipal: string | null, limit: number): Promise<MessageRow[]> {
    return findByRecipient(this.sql, recipient, fromPrincipal, limit);
  }

  /** `RecordStore.scanIdempotency` (erase.ts). */
  scanIdempotency(after: IdempotencyCursor | null, limit: number): Promise<IdempotencyRecord[]> {
    return scanIdempotency(this.sql, after, limit);
  }

  /** `RecordStore.rewriteIdempotency` (erase.ts). */
  rewriteIdempotency(records: readonly IdempotencyRecord[]): Promise<number> {
    return rewriteIdempotency(this.sql, records);
  }

  /**
   * `RecordStore.findByCarrierId`: of the rows an id names, in their own column or in the
   * side table, the newest (a carrier may reuse an id).
   */
  async findByCarrierId(carrierIds: readonly string[]): Promise<MessageRow | null> {
    for (const slice of chunks(carrierIds, CHUNK)) {
      if (slice.length === 0) continue;
      // The texts of the usual few spellings are kept: a receipt of a part another instance
      // submitted (or submitted before a restart) looks its row up by them.
      let sql = this.#byCarrierIds[slice.length];
      if (sql === undefined) {
        sql = byCarrierIds(this.sql.tables, slice.length);
        if (slice.length < 8) this.#byCarrierIds[slice.length] = sql;
      }
      const { rows } = await this.sql.run(sql, [...slice, ...slice]);
      for (const id of slice) {
        const named = rows.filter((row) => row.carrier_id === id).map(fromColumns);
        if (named.length > 0) return named.reduce((newest, row) => (row.seq > newest.seq ? row : newest));
      }
    }
    return null;
  }

  /** `RecordStore.claimMessages`. */
  claimMessages(options: ClaimOptions): Promise<MessageRow[]> {
    return claimMessages(this.sql, options);
  }

  /** `RecordStore.claimReports`. */
  claimReports(options: ClaimOptions): Promise<MessageRow[]> {
    return claimReports(this.sql, options);
  }

  /** `RecordStore.dueMessages`. */
  dueMessages(timer: Timer, at: number, limit: number): Promise<MessageRow[]> {
    return dueMessages(this.sql, timer, at, limit);
  }

  /** `RecordStore.queueEnds`. */
  queueEnds(queue: number, principalId: string, now: number): Promise<{ principalLast: number | null; head: number | null }> {
    return queueEnds(this.sql, queue, principalId, now);
  }

  /** `RecordStore.countQueued`. */
  countQueued(principalId?: string): Promise<QueueCount> {
    return countQueued(this.sql, principalId);
  }

  /**
   * One compare-and-set write: a single statement, or a transaction when it refunds, adds
   * carrier ids (`addedCarrierIds`; all of the row's when the caller does not say) or ends
   * the message (`reported`: its report key is taken first, report-log.ts).
   */
  async #write({ row, expectedVersion, refund, addedCarrierIds: added = row.carrierIds, previous, reported }: MessageWrite): Promise<boolean> {
    const addedCarrierIds = sideCarrierIds(row, added);
    let key: number;
    let values: unknown[];
    if (previous === undefined) {
      key = ALL_COLUMNS;
      values = rowValues(row);
    } else {
      // Only what changed: each column set costs its indexes an update, changed or not.
      const changed = changedValues(row, previous);
      key = changed.mask;
      values = changed.values;
    }
    if (reported === true) key |= REPORT_KEY;
    const sql = this.#updates.get(key) ?? this.#updateText(key);
    const params = [...values, expectedVersion + 1, row.record.ref, expectedVersion];
    const update = async (session: SqlSession): Promise<boolean> => (await this.sql.run(sql, params, session)).affected > 0;
    const units = refund ?? 0;
    if (units <= 0 && addedCarrierIds.length === 0 && reported !== true) return update(this.sql.client);
    return this.sql.client.transaction(async (tx) => {
      if (reported === true) await takeReportKey(this.sql, tx);
      if (!(await update(tx))) return false;
      if (units > 0) await addUnits(this.sql, tx, row.record.principalId, units);
      if (addedCarrierIds.length > 0) await this.#insertCarrierIds(tx, [{ ref: row.record.ref, ids: addedCarrierIds }]);
      return true;
    });
  }

  /**
   * The compare-and-set `UPDATE` of `key` (`ALL_COLUMNS` or a mask of changed columns, with
   * `REPORT_KEY`), kept: a write reuses the very text, which the client's statement cache
   * then finds at once.
   */
  #updateText(key: number): string {
    const columns = (key & ALL_COLUMNS) !== 0 ? WRITTEN_COLUMNS : maskedColumns(key);
    const set = [...columns.map((column) => `${column} = ?`), ...((key & REPORT_KEY) !== 0 ? [reportKeyTerm(this.sql)] : []), 'version = ?'];
    const sql = `UPDATE ${this.sql.tables.messages} SET ${set.join(', ')} WHERE ref = ? AND version = ?`;
    this.#updates.set(key, sql);
    return sql;
  }

  /** `RecordStore.writeMessages`: each write on its own, at once. */
  writeMessages(writes: readonly MessageWrite[]): Promise<boolean[]> {
    return Promise.all(writes.map((write) => this.#write(write)));
  }

  /** `RecordStore.deleteMessages`. */
  async deleteMessages(refs: readonly string[]): Promise<number> {
    let deleted = 0;
    for (const slice of chunks(refs, CHUNK)) {
      deleted += await this.sql.client.transaction(async (tx) => {
        await this.sql.run(`DELETE FROM ${this.sql.tables.carrierIds} WHERE ref IN ${tuple(slice.length)}`, slice, tx);
        const { affected } = await this.sql.run(`DELETE FROM ${this.sql.tables.messages} WHERE ref IN ${tuple(slice.length)}`, slice, tx);
        return affected;
      });
    }
    return deleted;
  }

  /** `RecordStore.findIdempotency` (typed as the contract's, so an adapter may answer without a promise). */
  findIdempotency(principalId: string, key: string, now: number): Promise<IdempotencyRecord | null> | IdempotencyRecord | null {
    return this.sql.run(
      `SELECT ${IDEMPOTENCY_COLUMNS} FROM ${this.sql.tables.idempotency} WHERE principal_id = ? AND idem_key = ? AND expires_at > ?`,
      [principalId, key, now],
    ).then(({ rows }) => (rows.length === 0 ? null : toIdempotency(rows[0]!)));
  }

  /** `RecordStore.purgeIdempotency`: the oldest expired keys first, read then deleted (some databases limit no `DELETE`). */
  async purgeIdempotency(now: number, limit: number): Promise<number> {
    if (limit <= 0) return 0;
    const table = this.sql.tables.idempotency;
    const order = `ORDER BY expires_at ${limitClause(this.sql.dialect)}`;
    const { rows } = await this.sql.run(`SELECT principal_id, idem_key FROM ${table} WHERE expires_at <= ? ${order}`, [now, limit]);
    return this.sql.deleteByKey(table, ['principal_id', 'idem_key'], rows, 'expires_at <= ? AND ', [now]);
  }

  /** `RecordStore.addCredit`: the addition and the read of the new balance in one transaction. */
  addCredit(principalId: string, units: number): Promise<number> {
    return this.sql.client.transaction(async (tx) => {
      await addUnits(this.sql, tx, principalId, units);
      return balanceOf(this.sql, tx, principalId);
    });
  }

  /** `RecordStore.creditBalance`. */
  creditBalance(principalId: string): Promise<number> {
    return balanceOf(this.sql, this.sql.client, principalId);
  }

  /** `RecordStore.countedUnits`. */
  countedUnits(principalId: string, period: string): Promise<number> {
    return countedOf(this.sql, this.sql.client, principalId, period);
  }

  /** `RecordStore.purgeCounters` (guard.ts). */
  purgeCounters(live: readonly string[], limit: number): Promise<number> {
    return purgeCounters(this.sql, live, limit);
  }
}

/**
 * The rows that `count` carrier ids name (the ids given twice as parameters), each with the
 * id that named it as `carrier_id`: those whose own column holds one, and those the side
 * table names.
 */
function byCarrierIds({ messages, carrierIds: side }: SqlTables, count: number): string {
  const columns = ROW_COLUMNS.split(', ').map((column) => `m.${column} AS ${column}`).join(', ');
  return `SELECT m.carrier_id AS carrier_id, ${columns} FROM ${messages} m WHERE m.carrier_id IN ${tuple(count)}
    UNION ALL
    SELECT c.carrier_id AS carrier_id, ${columns} FROM ${side} c JOIN ${messages} m ON m.ref = c.ref WHERE c.carrier_id IN ${tuple(count)}`;
}
