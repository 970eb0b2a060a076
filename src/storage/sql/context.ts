/**
 * What the statements of a SQL record store run on: its client, its dialect and its tables,
 * with the three ways every shared module runs a statement (as it is, for message rows, and
 * a delete by key in slices).
 *
 * @module
 */
import type { MessageRow } from '../record-store.js';
import type { SqlClient, SqlDialect, SqlResult, SqlSession } from './dialect.js';
import { chunks, fromColumns } from './rows.js';
import type { SqlTables } from './schema.js';

/** What the statements of a store run on: its client, its dialect and its tables (named with `prefix`). */
export class SqlContext {
  /** A context of `client` speaking `dialect`, over `tables` (their names start with `prefix`). */
  constructor(
    readonly client: SqlClient,
    readonly dialect: SqlDialect,
    readonly tables: SqlTables,
    readonly prefix: string,
  ) {}

  /** Runs `sql` (with `?` placeholders) on `session`: the pool unless a transaction's is given. */
  run(sql: string, params: readonly unknown[] = [], session: SqlSession = this.client): Promise<SqlResult> {
    return session.run(this.dialect.placeholders(sql), params);
  }

  /** The message rows `sql` selects (their `ROW_COLUMNS`, rows.ts), on `session`: the pool unless a transaction's is given. */
  async messages(sql: string, params: readonly unknown[], session: SqlSession = this.client): Promise<MessageRow[]> {
    const { rows } = await this.run(sql, params, session);
    return rows.map(fromColumns);
  }

  /**
   * Deletes the rows of `table` whose key (`columns`) is that of one of `keys` (rows read
   * with those columns) and that still meet `where` (ANDed, with its parameters), in slices:
   * a statement takes a bounded number of parameters (SQLite's default is 32,766). Resolves
   * with how many it deleted.
   */
  async deleteByKey(table: string, columns: readonly string[], keys: readonly Record<string, unknown>[], where = '', params: unknown[] = []): Promise<number> {
    const match = `(${columns.map((column) => `${column} = ?`).join(' AND ')})`;
    let deleted = 0;
    for (const slice of chunks(keys, 200)) {
      const values = slice.flatMap((key) => columns.map((column) => key[column]));
      const { affected } = await this.run(`DELETE FROM ${table} WHERE ${where}(${slice.map(() => match).join(' OR ')})`, [...params, ...values]);
      deleted += affected;
    }
    return deleted;
  }
}
