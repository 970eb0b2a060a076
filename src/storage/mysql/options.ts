/**
 * The options of the MariaDB/MySQL record store and their checking: a wrong pool, URI or
 * prefix must fail when the store is made, with a message naming the option, rather than at
 * the first query; the prefix is inlined in SQL, so it is held to a plain identifier here.
 *
 * @module
 */
import type { Pool, PoolOptions } from 'mysql2/promise';
import { OptionError } from '../../errors.js';
import { assertIdentifier, assertKnownKeys } from '../../util/known-keys.js';

/** Options of `MysqlRecordStore`: exactly one of `pool`, `uri` and `connection`. */
export interface MysqlRecordStoreOptions {
  /**
   * The host's `mysql2/promise` pool. The store borrows connections from it and never ends
   * it, so the host may share it and ends it itself. Its database must be selected.
   */
  pool?: Pool;
  /** A connection URI (`mysql://user:password@host:3306/database`): the store makes its own pool and ends it in `close()`. */
  uri?: string;
  /** `mysql2` pool options (with `database`): the store makes its own pool and ends it in `close()`. */
  connection?: PoolOptions;
  /**
   * The start of every table's name, so that several deployments (or tests) share a
   * database. Default `sms_outbox_`. Letters, digits and `_`, not starting with a digit, at
   * most 40 characters; every instance of one deployment must use the same.
   */
  tablePrefix?: string;
}

/** {@link MysqlRecordStoreOptions} checked: the pool to use or make, and the prefix. */
export interface ResolvedMysqlOptions {
  /** The host's pool, or how to make the store's own. */
  source: { pool: Pool } | { make: PoolOptions };
  /** The table name prefix. */
  tablePrefix: string;
}

const KNOWN_OPTIONS = ['pool', 'uri', 'connection', 'tablePrefix'] as const;

/** Checks `options`; throws an OptionError naming the option at fault. */
export function resolveMysqlOptions(options: MysqlRecordStoreOptions): ResolvedMysqlOptions {
  if (options === null || typeof options !== 'object') {
    throw new OptionError('MysqlRecordStore: options must be an object with a `pool`, a `uri` or `connection` options');
  }
  assertKnownKeys('MysqlRecordStore', options, KNOWN_OPTIONS);
  const given = (['pool', 'uri', 'connection'] as const).filter((name) => options[name] !== undefined);
  if (given.length !== 1) {
    throw new OptionError(`MysqlRecordStore: give exactly one of \`pool\`, \`uri\` and \`connection\`, got ${given.length === 0 ? 'none' : given.join(' and ')}`);
  }
  const tablePrefix = options.tablePrefix ?? 'sms_outbox_';
  assertIdentifier('MysqlRecordStore: `tablePrefix`', tablePrefix, 40);
  if (options.pool !== undefined) {
    const pool = options.pool as Partial<Pool> | null;
    if (typeof pool?.query !== 'function' || typeof pool.getConnection !== 'function') {
      throw new OptionError("MysqlRecordStore: `pool` must be a mysql2/promise pool (import mysql from 'mysql2/promise'; mysql.createPool(...))");
    }
    return { source: { pool: options.pool }, tablePrefix };
  }
  if (options.uri !== undefined) {
    if (typeof options.uri !== 'string' || !/^(mysql|mariadb):\/\//.test(options.uri)) {
      throw new OptionError('MysqlRecordStore: `uri` must be a string like mysql://user:password@host:3306/database');
    }
    return { source: { make: { uri: options.uri.replace(/^mariadb:/, 'mysql:') } }, tablePrefix };
  }
  if (options.connection === null || typeof options.connection !== 'object') {
    throw new OptionError('MysqlRecordStore: `connection` must be mysql2 pool options ({ host, user, password, database })');
  }
  return { source: { make: { ...options.connection } }, tablePrefix };
}
