import { describe, it } from 'vitest';
import { createLedger } from '../../src/ledger/index.js';
import { MemoryInbound } from '../../src/storage/memory/inbound.js';
import { runStorageContract } from '../../src/testing/storage-suite/index.js';
import { NaiveRecordStore } from '../helpers/naive-record-store.js';

// The plain naive store runs through the ledger in the record-store suite
// (test/storage/naive-record-store.test.ts); here, one with the inbound methods, which the
// ledger offers as the store has them.
runStorageContract(
  { describe, it },
  {
    name: 'ledger over the naive record store with inbound methods',
    create: async () => {
      return createLedger(Object.assign(new NaiveRecordStore(), { inbound: new MemoryInbound() }));
    },
  },
);
