import { describe, it } from 'vitest';
import { createLedger } from '../../src/ledger/index.js';
import { MemoryRecordStore } from '../../src/storage/memory/index.js';
import { runRecordStoreContract } from '../../src/testing.js';
import { runStorageContract } from '../../src/testing/storage-suite/index.js';

runRecordStoreContract({ describe, it }, { name: 'MemoryRecordStore', create: async () => new MemoryRecordStore(), sharesRows: true });

runStorageContract({ describe, it }, { name: 'createLedger(MemoryRecordStore)', create: async () => createLedger(new MemoryRecordStore()) });
