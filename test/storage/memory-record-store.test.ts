import { describe, it } from 'vitest';
import { MemoryRecordStore } from '../../src/storage/memory/index.js';
import { runRecordStoreContract } from '../../src/testing.js';

// The memory store keeps the row objects it is given, never changing them (`sharesRows`).
runRecordStoreContract({ describe, it }, { name: 'MemoryRecordStore', create: async () => new MemoryRecordStore(), sharesRows: true });
