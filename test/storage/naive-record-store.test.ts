/**
 * The reference record store (test/helpers/naive-record-store.ts) keeps the RecordStore
 * contract: the record-store suite run against it.
 */
import { describe, it } from 'vitest';
import { runRecordStoreContract } from '../../src/testing.js';
import { NaiveRecordStore } from '../helpers/naive-record-store.js';

runRecordStoreContract({ describe, it }, { name: 'naive record store', create: async () => new NaiveRecordStore() });
