/**
 * `sms-outbox/testing`: the storage contract suite, for the bundled adapters and a host's own.
 */
export { buildNewMessage, runStorageContract } from './testing/storage-suite/index.js';
export type { StorageSuiteHarness, StorageSuiteOptions } from './testing/storage-suite/index.js';
