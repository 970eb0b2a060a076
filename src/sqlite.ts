/**
 * `sms-outbox/sqlite`: the SQLite storage. Needs the optional peer dependency better-sqlite3.
 */
export { SqliteStorage } from './storage/sqlite.js';
export type { SqliteStorageOptions } from './storage/sqlite.js';
