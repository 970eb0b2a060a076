/**
 * The `sms-outbox/mysql` entry: the MariaDB/MySQL record store, kept out of the main entry
 * so a host that never imports it needs no `mysql2`.
 */
export { MysqlRecordStore } from './storage/mysql/adapter.js';
export type { MysqlRecordStoreOptions } from './storage/mysql/options.js';
