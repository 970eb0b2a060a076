/**
 * `sms-outbox/sqlite`: the SQLite storage (`SqliteStorage`, the library's ledger over
 * `SqliteRecordStore`). Needs the optional peer dependency better-sqlite3, loaded when this
 * entry is imported (storage/sqlite/options.ts).
 */
export { SqliteRecordStore, SqliteStorage } from './storage/sqlite/adapter.js';
export type { SqliteStorageOptions } from './storage/sqlite/options.js';
