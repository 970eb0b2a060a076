/**
 * What a SQL record store needs from its database beyond the statements every SQL database
 * reads alike: the `SqlDialect` (the few pieces of SQL text that differ between databases)
 * and the `SqlClient` (how a statement is sent, and how a transaction or a schema change is
 * run on one connection). An adapter supplies both, its client built with the transaction and
 * the retry after a deadlock here; `SqlRecordStore` (store.ts) writes every statement once on
 * top of them, run through a `SqlContext` (context.ts).
 *
 * @module
 */

/** The column types of the schema (schema.ts), in the database's own words. */
export interface SqlTypes {
  /** A short key compared exactly, case-sensitive (a ref, a principal id, a carrier id, an idempotency key), indexable whole. */
  key: string;
  /** A text of any length, indexable by a prefix ({@link SqlDialect.indexPrefix}). */
  text: string;
  /** The JSON document of a row (its record and book), kept as text as given. */
  json: string;
  /** A 64-bit integer (epoch ms, balances, versions). */
  bigint: string;
  /** A float that keeps every JavaScript number exactly (the fair-order key). */
  double: string;
  /** The insertion counter: a 64-bit integer the database assigns, increasing, on insert. */
  serial: string;
}

/** The SQL text that differs between databases. Statements are written with `?` placeholders. */
export interface SqlDialect {
  /** The column types. */
  types: SqlTypes;
  /** The end of every `CREATE TABLE` (engine, character set, a binary collation so keys compare case-sensitively); may be empty. */
  tableOptions: string;
  /** `name` quoted as an identifier. */
  quote(name: string): string;
  /** `sql` with its `?` placeholders rewritten as the driver takes them (`$1`, `$2`... for some); none occurs inside a literal. */
  placeholders(sql: string): string;
  /** An index column over a {@link SqlTypes.text} column: its first `chars` characters where the database indexes no longer keys. */
  indexPrefix(column: string, chars: number): string;
  /** An `INSERT` of `values` (parenthesised tuples) into `columns` that skips each row whose unique key is taken, instead of failing. */
  insertIgnore(table: string, columns: string, values: string): string;
  /**
   * An `INSERT` of one row `(key..., amount)` into `(keyColumns, column)` (`keyColumns` the
   * unique key's columns, comma-separated) that, when the key is taken, adds `amount` to the
   * stored `column` instead, holding the row's write lock from then on: a parameter per key
   * column, then the amount.
   */
  upsertAdd(table: string, keyColumns: string, column: string): string;
  /**
   * What follows the table name in a `SELECT` to make it read `index` (a quoted name), for
   * the claims: a claim that sorted its candidates instead would lock every candidate, not
   * the `LIMIT` it takes, and a concurrent claim would skip them all. Empty where the
   * database locks only the rows it returns.
   */
  forceIndex(index: string): string;
  /**
   * Whether `CREATE INDEX ... WHERE` (a partial index) is understood: the queue, report and
   * timer indexes then leave out the rows they never find. Absent: no.
   */
  partialIndexes?: boolean;
  /**
   * A `LIMIT` whose count is a parameter, where `LIMIT ?` is not the best way to write it.
   * Absent: `LIMIT ?`.
   */
  limitParam?: string;
  /** What ends a `SELECT` that locks the rows it returns and skips rows another transaction holds (`FOR UPDATE SKIP LOCKED`). */
  lockSkipLocked: string;
  /**
   * The text at `path` (array indexes and object keys) of the JSON text in `column`, or
   * `NULL` when it has none there: for a schema step that fills a new column from `data`.
   */
  jsonText(column: string, path: readonly (string | number)[]): string;
}

/** What a statement gave back: the rows it selected, and how many rows it inserted, changed or deleted. */
export interface SqlResult {
  /** The selected rows, by column name (empty for a statement that selects nothing). */
  rows: Record<string, unknown>[];
  /** Rows inserted, updated (matched and changed) or deleted. */
  affected: number;
}

/** Somewhere to run statements: the pool (each statement on its own) or one transaction's connection. */
export interface SqlSession {
  /** Runs `sql` (placeholders already as the driver takes them) with `params`. */
  run(sql: string, params?: readonly unknown[]): Promise<SqlResult>;
}

/** How statements reach the database. */
export interface SqlClient extends SqlSession {
  /**
   * Runs `work` in one transaction on one connection, at READ COMMITTED or stronger: commits
   * when it resolves, rolls back when it throws (and throws that). May run `work` again after
   * a deadlock, so `work` changes nothing outside the database.
   */
  transaction<T>(work: (tx: SqlSession) => Promise<T>): Promise<T>;
  /**
   * Runs `work` as {@link SqlClient.transaction} does, holding the lock `key` (any string)
   * until it ends: two calls with one key, from any process on the database, run one after
   * the other, and the later one's statements see what the earlier one committed. The
   * inbound parts of one message are stored under their message's key this way.
   */
  lockedTransaction<T>(key: string, work: (tx: SqlSession) => Promise<T>): Promise<T>;
  /**
   * Runs `work` on one connection while holding the database-wide lock `name`, so that two
   * processes creating the schema at once do it one after the other.
   */
  exclusive<T>(name: string, work: (session: SqlSession) => Promise<T>): Promise<T>;
}

/** How many times a transaction is run when the database ends it as a deadlock's victim. */
const DEADLOCK_ATTEMPTS = 5;

/**
 * Runs `attempt` (a whole transaction) again when it fails as a deadlock's victim
 * (`isDeadlock`: the database rolled it back, so running it again is safe), up to
 * {@link DEADLOCK_ATTEMPTS} times: for a {@link SqlClient.transaction} on a server.
 */
export async function retryingDeadlocks<T>(isDeadlock: (error: unknown) => boolean, attempt: () => Promise<T>): Promise<T> {
  for (let n = 1; ; n++) {
    try {
      return await attempt();
    } catch (error) {
      if (!isDeadlock(error) || n >= DEADLOCK_ATTEMPTS) throw error;
    }
  }
}

/**
 * Runs `work` in a transaction on `tx` (one connection), started by the statements `begin`:
 * committed when it resolves, rolled back when it throws (and that thrown). `broken` hears
 * of a rollback that failed: the connection is then in an unknown state, not to be reused.
 */
export async function transactionOn<T>(tx: SqlSession, begin: readonly string[], work: (tx: SqlSession) => Promise<T>, broken: (error: unknown) => void): Promise<T> {
  try {
    for (const statement of begin) await tx.run(statement);
    const result = await work(tx);
    await tx.run('COMMIT');
    return result;
  } catch (error) {
    await tx.run('ROLLBACK').catch(broken);
    throw error;
  }
}

/** `LIMIT ?` as `dialect` writes it ({@link SqlDialect.limitParam}). */
export function limitClause(dialect: SqlDialect): string {
  return dialect.limitParam ?? 'LIMIT ?';
}

/** One `?` per column of `columns` (comma-separated): the placeholders of an `upsertAdd`'s key. */
export function placeholdersOf(columns: string): string {
  return columns
    .split(',')
    .map(() => '?')
    .join(', ');
}
