import { describe, it } from 'vitest';
import { createLedger } from '../../src/ledger/index.js';
import { runStorageContract } from '../../src/testing/storage-suite/index.js';
import { NaiveRecordStore } from '../helpers/naive-record-store.js';

runStorageContract({ describe, it }, { name: 'ledger over the naive record store', create: async () => createLedger(new NaiveRecordStore()) });
