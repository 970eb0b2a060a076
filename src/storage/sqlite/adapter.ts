/**
 * The SQLite storage: `SqliteRecordStore`, the shared SQL record store (storage/sql/) on one
 * better-sqlite3 connection with group commit (client.ts) and SQLite's SQL text
 * (dialect.ts), and `SqliteStorage`, the library's ledger over it, as `MemoryStorage` is over
 * the memory store. The file's own schema steps (inbound tables, the upgrade of a 0.1.0
 * file) are in upgrade.ts; the inbound (MO) rows are the shared SQL layer's (sql/inbound.ts)
 * in those tables.
 *
 * @module
 */
import type Database from 'better-sqlite3';
import type { IdempotencyRecord } from '../idempotency-record.js';
import type { Storage } from '../contract.js';
import type { OPTIONAL_STORAGE_METHODS } from '../optional-methods.js';
import { IDEMPOTENCY_COLUMNS, toIdempotency } from '../sql/rows.js';
import { SqlInbound } from '../sql/inbound.js';
import { SqlRecordStore } from '../sql/store.js';
import { Ledger } from '../../ledger/ledger.js';
import { SqliteClient } from './client.js';
import { sqliteDialect } from './dialect.js';
import { resolveSqliteOptions, type SqliteStorageOptions } from './options.js';
import { SQLITE_INBOUND_TABLES, upgradeFile } from './upgrade.js';

/** The start of the record-store tables' names: apart from the inbound tables and those of 0.1.0 (`sms_`). */
const TABLE_PREFIX = 'sms_outbox_';

/**
 * A record store in one SQLite file (see {@link SqliteStorage}, the storage hosts use). Keeps
 * inbound (MO) messages too (`inbound`), in tables of its own.
 */
export class SqliteRecordStore extends SqlRecordStore {
  /** See {@link RecordStore.inbound}. */
  readonly inbound: SqlInbound;
  readonly #db: Database.Database;
  readonly #ownsDatabase: boolean;
  readonly #client: SqliteClient;
  readonly #synchronous: 'FULL' | 'NORMAL';
  #ready: Promise<void> | undefined;
  #idempotency: Database.Statement | undefined;
  #opened = false;
  #closed = false;

  /** Opens the file (or takes the handle); throws on a bad option. */
  constructor(options: SqliteStorageOptions) {
    const { db, ownsDatabase, synchronous, busyTimeoutMs } = resolveSqliteOptions(options);
    const client = new SqliteClient(db, () => this.ready(), busyTimeoutMs);
    super(client, sqliteDialect, TABLE_PREFIX);
    this.#db = db;
    this.#ownsDatabase = ownsDatabase;
    this.#client = client;
    this.#synchronous = synchronous;
    // Its writes are transactions of the client's group, so they share its commits.
    this.inbound = new SqlInbound(client, sqliteDialect, SQLITE_INBOUND_TABLES, () => this.ready());
  }

  /**
   * Sets the pragmas, creates the tables and upgrades a 0.1.0 file (upgrade.ts), once; a
   * failure (a locked file) is tried again at the next call.
   */
  override ready(): Promise<void> {
    this.#ready ??= (async () => {
      // journal_mode cannot change inside a transaction; an in-memory database stays 'memory'.
      this.#db.pragma('journal_mode = WAL');
      this.#db.pragma(`synchronous = ${this.#synchronous}`);
      // The wait for another connection's lock is the client's, which does not block the
      // process (client.ts); reads in WAL mode take no lock.
      this.#db.pragma('busy_timeout = 0');
      // A transaction of the group is a savepoint, whose journal of the pages it changes is a
      // temporary file by default: in memory, a write in a savepoint costs a copy, not a write.
      this.#db.pragma('temp_store = MEMORY');
      await super.ready();
      await this.#client.exclusive('upgrade', async () => upgradeFile(this.#db, this.sql.tables));
      this.#client.opened();
      this.#opened = true;
    })().catch((error: unknown) => {
      this.#ready = undefined;
      throw error;
    });
    return this.#ready;
  }

  /**
   * The principal's live idempotency record under `key`, or `null`: its answer is sent as an
   * acknowledgement, so it waits for the open group's commit (client.ts); without a promise
   * when no group is open, as every keyed request looks its key up.
   */
  override findIdempotency(principalId: string, key: string, now: number): Promise<IdempotencyRecord | null> | IdempotencyRecord | null {
    if (!this.#opened || this.#db.inTransaction) return this.ready().then(() => this.#client.settled()).then(() => this.findIdempotency(principalId, key, now));
    this.#idempotency ??= this.#db.prepare(
      `SELECT ${IDEMPOTENCY_COLUMNS} FROM ${this.sql.tables.idempotency} WHERE principal_id = ? AND idem_key = ? AND expires_at > ?`,
    );
    const row = this.#idempotency.get(principalId, key, now) as Record<string, unknown> | undefined;
    return row === undefined ? null : toIdempotency(row);
  }

  /** Commits the writes still waiting for their group, then closes the file if it opened it. */
  override async close(): Promise<void> {
    if (this.#closed) return;
    await this.#ready?.catch(() => undefined);
    await this.#client.settled();
    if (this.#closed) return;
    this.#closed = true;
    this.#client.flush();
    this.#client.close();
    if (this.#ownsDatabase) this.#db.close();
  }
}

/** What the SQLite storage offers: the whole `Storage` contract, every optional group included. */
export type SqliteStorage = Ledger & Required<Pick<Storage, (typeof OPTIONAL_STORAGE_METHODS)[number] | 'ready' | 'close'>>;

/**
 * Storage in one SQLite file: durable across restarts and crashes, for one process.
 *
 * Opens `path` at construction (or takes the host's `database` handle) and creates its
 * tables on first use (`ready()`), moving the messages of a file written by sms-outbox 0.1.0
 * into them. The writes asked for in one turn of the event loop share one commit, so a burst
 * of requests and worker steps pays for one disk sync rather than one each; a write resolves
 * once committed. Several processes may open the same file (SQLite locks it), but claims are
 * only as fast as one writer; for many instances use `sms-outbox/postgres`.
 */
// Anonymous, so that it is named after the constant (`did you mean new SqliteStorage(...)?`).
export const SqliteStorage = class extends Ledger {
  constructor(options: SqliteStorageOptions) {
    super(new SqliteRecordStore(options));
  }
} as new (options: SqliteStorageOptions) => SqliteStorage;
