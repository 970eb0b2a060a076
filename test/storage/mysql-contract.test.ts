/**
 * MysqlRecordStore keeps the record-store contract, and the library's ledger over it keeps
 * the full storage contract; each test on tables of its own in the test MariaDB.
 */
import { it } from 'vitest';
import { createLedger } from '../../src/ledger/index.js';
import { MysqlRecordStore } from '../../src/storage/mysql/adapter.js';
import type { RecordStore } from '../../src/storage/record-store.js';
import { runRecordStoreContract } from '../../src/testing/record-store-suite/index.js';
import { runStorageContract } from '../../src/testing/storage-suite/index.js';
import type { Storage } from '../../src/storage/contract.js';
import { dbDescribe, dropTables, freshPrefix, pool, useMysql } from './mysql-setup.js';

useMysql();

const prefixes = new WeakMap<object, string>();

/** A store on tables of its own, remembered under `key` (the store, or the ledger over it) for the drop. */
function storeUnderPrefix(): { store: MysqlRecordStore; prefix: string } {
  const prefix = freshPrefix();
  return { store: new MysqlRecordStore({ pool, tablePrefix: prefix }), prefix };
}

async function drop(key: object): Promise<void> {
  const prefix = prefixes.get(key);
  if (prefix !== undefined) await dropTables(prefix);
}

runRecordStoreContract(
  { describe: dbDescribe, it },
  {
    name: 'MysqlRecordStore',
    create: async (): Promise<RecordStore> => {
      const { store, prefix } = storeUnderPrefix();
      prefixes.set(store, prefix);
      return store;
    },
    destroy: drop,
  },
);

runStorageContract(
  { describe: dbDescribe, it },
  {
    name: 'ledger over MysqlRecordStore',
    create: async (): Promise<Storage> => {
      const { store, prefix } = storeUnderPrefix();
      const storage = createLedger(store);
      prefixes.set(storage, prefix);
      return storage;
    },
    destroy: drop,
  },
);
