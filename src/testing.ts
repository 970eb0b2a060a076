/**
 * `sms-outbox/testing`: the contract suites, for the bundled storages and a host's own: the
 * `Storage` suite (`runStorageContract`) and the `RecordStore` suite (`runRecordStoreContract`).
 */
export { buildNewMessage, runStorageContract } from './testing/storage-suite/index.js';
export type { StorageSuiteHarness, StorageSuiteOptions } from './testing/storage-suite/index.js';
export { buildMessageRow, runRecordStoreContract } from './testing/record-store-suite/index.js';
export type { MessageRowOverrides, RecordStoreSuiteHarness, RecordStoreSuiteOptions } from './testing/record-store-suite/index.js';
