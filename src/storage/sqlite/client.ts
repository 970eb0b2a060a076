/**
 * The shared SQL record store's `SqlClient` on one better-sqlite3 connection, with group
 * commit: every write asked for in one turn of the event loop runs in one transaction
 * (`BEGIN IMMEDIATE` at the first, `COMMIT` in a `setImmediate`), so a burst of requests and
 * worker steps pays for one commit and one disk sync, not one each. Every write's promise
 * resolves only after that commit (an acknowledged insert is on disk) and rejects if it fails.
 *
 * A `transaction(work)` runs inside the group as a savepoint, one at a time (a queue: `work`
 * is async, but every statement resolves at once), so a throwing `work` rolls back alone;
 * writes outside a transaction wait for the one running. A statement that fails outside a
 * transaction changes nothing (SQLite undoes the statement) and fails its caller alone.
 *
 * Reads run at once and see the open group's writes. If that group then fails to commit
 * (disk full, an I/O error), every write of it fails its caller, and a write decided from
 * such a read is a compare-and-set against a version that was rolled back, so it is refused:
 * nothing derived from an uncommitted write is acknowledged. The one read whose answer
 * leaves the process as an acknowledgement, the idempotency lookup, waits for the open group
 * ({@link SqliteClient.settled}).
 *
 * @module
 */
import type Database from 'better-sqlite3';
import type { SqlClient, SqlResult, SqlSession } from '../sql/dialect.js';

/** A write waiting for its group's commit. */
interface Waiter {
  value: unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

const NO_ROWS: Record<string, unknown>[] = [];

/** How long the group waits before it tries another connection's write lock again. */
const LOCK_RETRY_MS = 2;

/** How many prepared statements are kept. */
const MAX_STATEMENTS = 1_000;

/** Group commit and statements on one connection (see the module's TSDoc). */
export class SqliteClient implements SqlClient {
  readonly #db: Database.Database;
  readonly #statements = new Map<string, Database.Statement>();
  /** The writes of the open group, resolved by its commit. */
  #waiters: Waiter[] = [];
  #commitTimer: NodeJS.Immediate | null = null;
  /** A transaction's `work` is running: other writes and transactions queue behind it. */
  #busy = false;
  readonly #queue: (() => void)[] = [];
  /** The session a transaction's `work` runs its statements on: at once, inside its savepoint. */
  readonly #inside: SqlSession = { run: (sql, params) => Promise.resolve(this.#execute(sql, params)) };

  /** Until the schema is ready: what statements and transactions wait for (the store's `ready()`). */
  #ready: (() => Promise<void>) | null;

  /**
   * A client on `db` whose statements and transactions wait for `ready` (which creates the
   * schema through {@link exclusive}, the one entry that does not wait) on first use.
   */
  constructor(db: Database.Database, ready: () => Promise<void>, busyTimeoutMs: number) {
    this.#db = db;
    this.#ready = ready;
    this.#busyTimeoutMs = busyTimeoutMs;
  }

  readonly #busyTimeoutMs: number;
  /** Since when the group has waited for another connection's write lock, if it is waiting. */
  #lockWaitSince: number | null = null;
  #closed = false;

  /** Refuses every later statement (the store closed). */
  close(): void {
    this.#closed = true;
  }

  /** Statements no longer wait: the schema is ready. */
  opened(): void {
    this.#ready = null;
  }

  /** `SqlSession.run`: a read at once; a write in the open group, resolved after its commit. */
  run(sql: string, params: readonly unknown[] = []): Promise<SqlResult> {
    if (this.#ready !== null) return this.#ready().then(() => this.run(sql, params));
    if (this.#closed) return Promise.reject(new Error('SqliteStorage: the storage is closed'));
    const statement = this.#statement(sql);
    if (statement.reader) {
      try {
        return Promise.resolve({ rows: statement.all(...params) as Record<string, unknown>[], affected: 0 });
      } catch (error) {
        return Promise.reject(error as Error);
      }
    }
    const later = () => new Promise<SqlResult>((resolve) => this.#queue.push(() => resolve(this.run(sql, params))));
    if (this.#busy) return later();
    try {
      if (!this.#begin()) return later();
      return this.#afterCommit({ rows: NO_ROWS, affected: statement.run(...params).changes });
    } catch (error) {
      this.#lostGroup(error);
      return Promise.reject(error as Error);
    }
  }

  /** `SqlClient.transaction`: `work` in a savepoint of the open group; resolves after the group's commit. */
  transaction<T>(work: (tx: SqlSession) => Promise<T>): Promise<T> {
    if (this.#ready !== null) return this.#ready().then(() => this.transaction(work));
    return this.#transaction(work);
  }

  #transaction<T>(work: (tx: SqlSession) => Promise<T>): Promise<T> {
    if (this.#closed) return Promise.reject(new Error('SqliteStorage: the storage is closed'));
    return new Promise<T>((resolve, reject) => {
      const start = (): void => {
        try {
          if (!this.#begin()) {
            this.#queue.push(start);
            return;
          }
        } catch (error) {
          reject(error as Error);
          return;
        }
        this.#busy = true;
        this.#runInSavepoint(work).then(resolve, reject);
      };
      if (this.#busy) this.#queue.push(start);
      else start();
    });
  }

  /** `SqlClient.lockedTransaction`: a transaction of the group holds the database's write lock, so it is enough. */
  lockedTransaction<T>(_key: string, work: (tx: SqlSession) => Promise<T>): Promise<T> {
    return this.transaction(work);
  }

  /** `SqlClient.exclusive`: the group's write lock is the database's, so a transaction is enough. Does not wait for the schema: it makes it. */
  exclusive<T>(_name: string, work: (session: SqlSession) => Promise<T>): Promise<T> {
    return this.#transaction(work);
  }

  /** Resolves once the writes of the open group (if any) are committed, whatever their outcome. */
  settled(): Promise<void> {
    const committed = () => this.#afterCommit(undefined).catch(() => undefined);
    if (!this.#busy) return committed();
    return new Promise((resolve) => this.#queue.push(() => resolve(committed())));
  }

  /** Commits the open group now (`close()`: nothing waiting is lost). */
  flush(): void {
    if (this.#commitTimer !== null) clearImmediate(this.#commitTimer);
    this.#commitTimer = null;
    if (!this.#db.inTransaction) return;
    const waiters = this.#waiters;
    this.#waiters = [];
    try {
      this.#execute('COMMIT');
    } catch (error) {
      if (this.#db.inTransaction) this.#execute('ROLLBACK');
      for (const waiter of waiters) waiter.reject(error);
      return;
    }
    for (const waiter of waiters) waiter.resolve(waiter.value);
  }

  async #runInSavepoint<T>(work: (tx: SqlSession) => Promise<T>): Promise<T> {
    let value: T;
    try {
      this.#execute('SAVEPOINT sms_outbox_tx');
      try {
        value = await work(this.#inside);
      } catch (error) {
        if (this.#db.inTransaction) {
          this.#execute('ROLLBACK TO sms_outbox_tx');
          this.#execute('RELEASE sms_outbox_tx');
        } else this.#lostGroup(error);
        throw error;
      }
      this.#execute('RELEASE sms_outbox_tx');
    } catch (error) {
      this.#lostGroup(error);
      this.#idle();
      throw error;
    }
    const committed = this.#afterCommit(value);
    this.#idle();
    return committed;
  }

  /** The transaction's work is done: the queued writes and transactions run, in order, until one takes the turn. */
  #idle(): void {
    this.#busy = false;
    while (!this.#busy && this.#queue.length > 0) this.#queue.shift()!();
  }

  /**
   * Opens the group's transaction if none is open, and schedules its commit; `false` when
   * another connection holds the write lock: the queue then waits a few ms, without holding
   * the event loop (the connection's own `busy_timeout` is 0: a wait there would block the
   * process, and with it a commit of another connection of this process it may wait for).
   * Throws once it has waited `busyTimeoutMs`.
   */
  #begin(): boolean {
    if (!this.#db.inTransaction) {
      try {
        this.#execute('BEGIN IMMEDIATE');
      } catch (error) {
        if ((error as { code?: unknown }).code !== 'SQLITE_BUSY') throw error;
        const now = Date.now();
        this.#lockWaitSince ??= now;
        if (now - this.#lockWaitSince >= this.#busyTimeoutMs) {
          this.#lockWaitSince = null;
          throw error;
        }
        this.#busy = true;
        setTimeout(() => this.#idle(), LOCK_RETRY_MS);
        return false;
      }
      this.#lockWaitSince = null;
    }
    this.#commitTimer ??= setImmediate(() => this.#commitWhenIdle());
    return true;
  }

  #commitWhenIdle(): void {
    this.#commitTimer = null;
    // A transaction's work that awaits more than its statements may span turns: commit after it.
    if (this.#busy) this.#queue.push(() => this.flush());
    else this.flush();
  }

  /** A promise of `value` settled by the open group's commit. */
  #afterCommit<T>(value: T): Promise<T> {
    if (!this.#db.inTransaction) return Promise.resolve(value);
    return new Promise<T>((resolve, reject) => this.#waiters.push({ value, resolve: resolve as (value: unknown) => void, reject }));
  }

  /** After a failed statement: if SQLite rolled the whole transaction back (disk full, I/O error), the group is lost. */
  #lostGroup(error: unknown): void {
    if (this.#db.inTransaction || this.#waiters.length === 0) return;
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const waiter of waiters) waiter.reject(error);
  }

  /** Runs `sql` on the handle at once. */
  #execute(sql: string, params: readonly unknown[] = []): SqlResult {
    const statement = this.#statement(sql);
    if (statement.reader) return { rows: statement.all(...params) as Record<string, unknown>[], affected: 0 };
    return { rows: NO_ROWS, affected: statement.run(...params).changes };
  }

  /** The prepared statement of `sql`, prepared once. */
  #statement(sql: string): Database.Statement {
    let statement = this.#statements.get(sql);
    if (statement === undefined) {
      // Lists of every length make many texts: a bound, past which they are prepared again.
      if (this.#statements.size >= MAX_STATEMENTS) this.#statements.clear();
      statement = this.#db.prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }
}
