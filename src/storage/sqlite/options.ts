/**
 * The options of the SQLite storage, their checking, and opening the database they name.
 * A wrong option must fail when the storage is made, with a message that names it, rather
 * than at the first write; and a database file named in a folder that does not exist yet
 * must open all the same, so the folder is made here before the file is opened.
 *
 * better-sqlite3 is loaded when this module is, that is at `import 'sms-outbox/sqlite'`,
 * as a static import would be, but a missing package fails with `npm install
 * better-sqlite3` rather than Node's bare ERR_MODULE_NOT_FOUND (see util/require-peer.ts).
 *
 * @module
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type Database from 'better-sqlite3';
import { assertKnownKeys, assertNumber } from '../../util/known-keys.js';
import { requirePeer } from '../../util/require-peer.js';

/** Options of `SqliteStorage` (adapter.ts). Give `path` or `database`, not both. */
export interface SqliteStorageOptions {
  /** The database file, created if missing, with its folder (`':memory:'` for a database in memory). */
  path?: string;
  /**
   * An open better-sqlite3 handle the host made instead of `path`; `close()` leaves it
   * open. The adapter sets WAL mode, `synchronous` and `busy_timeout` on it and owns its
   * `PRAGMA user_version` (the schema version), so give it a database of its own.
   */
  database?: Database.Database;
  /**
   * How hard each commit is pushed to disk. `'FULL'` (default): in WAL mode a commit
   * survives power loss and an OS crash. `'NORMAL'`: faster; a commit survives a killed
   * process, but the last commits before a power loss or OS crash may be lost.
   */
  synchronous?: 'FULL' | 'NORMAL';
  /** How long (ms) a write waits for another connection's lock before it fails; default 5000. */
  busyTimeoutMs?: number;
}

/** {@link SqliteStorageOptions} checked, with the defaults filled in and the database open. */
export interface ResolvedSqliteOptions {
  /** The database: the host's handle, or the file `path` opened. */
  db: Database.Database;
  /** Whether the storage opened `db` itself, and so closes it on `close()`. */
  ownsDatabase: boolean;
  /** The `synchronous` pragma to set. */
  synchronous: 'FULL' | 'NORMAL';
  /** The `busy_timeout` pragma to set, in ms. */
  busyTimeoutMs: number;
}

const KNOWN_OPTIONS = ['path', 'database', 'synchronous', 'busyTimeoutMs'] as const;

const BetterSqlite3 = requirePeer<typeof Database>('better-sqlite3', 'sms-outbox/sqlite');

/**
 * Creates the folder of the database file `path`, as `new SqliteStorage({ path:
 * './data/sms.db' })` is expected to work on a fresh checkout. Not for `':memory:'`, which
 * names no file (an empty path, SQLite's temporary database, is refused before this).
 */
function createFolderOf(path: string): void {
  if (path === ':memory:') return;
  const folder = dirname(path);
  try {
    mkdirSync(folder, { recursive: true });
  } catch (error) {
    throw new Error(`SqliteStorage: cannot create the folder ${folder} of ${path}: ${(error as Error).message}`, { cause: error });
  }
}

/**
 * Checks `options`, then opens the file `path` (making its folder) or takes the host's
 * `database`. Throws a TypeError for a bad or unknown option, before anything is created.
 */
export function resolveSqliteOptions(options: SqliteStorageOptions): ResolvedSqliteOptions {
  if (options === null || typeof options !== 'object') {
    throw new TypeError('SqliteStorage: options must be an object with `path` or `database`');
  }
  assertKnownKeys('SqliteStorage', options, KNOWN_OPTIONS);
  const { path, database, synchronous = 'FULL', busyTimeoutMs = 5_000 } = options;
  if ((path === undefined) === (database === undefined)) {
    throw new TypeError('SqliteStorage: give exactly one of `path` (a file) or `database` (an open handle)');
  }
  if (path !== undefined && (typeof path !== 'string' || path === '')) {
    throw new TypeError('SqliteStorage: `path` must be a non-empty string');
  }
  if (synchronous !== 'FULL' && synchronous !== 'NORMAL') {
    throw new TypeError(`SqliteStorage: \`synchronous\` must be 'FULL' or 'NORMAL', got ${String(synchronous)}`);
  }
  assertNumber('SqliteStorage: `busyTimeoutMs`', busyTimeoutMs, 0);
  if (path !== undefined) createFolderOf(path);
  return { db: database ?? new BetterSqlite3(path!), ownsDatabase: database === undefined, synchronous, busyTimeoutMs };
}
