/**
 * `sms-outbox/sqlite`: the SQLite storage. Needs the optional peer dependency better-sqlite3,
 * loaded when this entry is imported (storage/sqlite/options.ts).
 */
export { SqliteStorage } from './storage/sqlite/adapter.js';
export type { SqliteStorageOptions } from './storage/sqlite/options.js';
