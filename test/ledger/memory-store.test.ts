import { describe, it } from 'vitest';
import { createLedger } from '../../src/ledger/index.js';
import { MemoryRecordStore } from '../../src/storage/memory/index.js';
import { runStorageContract } from '../../src/testing/storage-suite/index.js';

runStorageContract({ describe, it }, { name: 'ledger over the memory record store', create: async () => createLedger(new MemoryRecordStore()) });
