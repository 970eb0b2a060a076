/**
 * The `sms-outbox/postgres` entry: the PostgreSQL storage, kept out of the main entry so a
 * host that never imports it needs no `pg`.
 */
export { PostgresStorage } from './storage/postgres/adapter.js';
export type { PostgresStorageOptions } from './storage/postgres/options.js';
