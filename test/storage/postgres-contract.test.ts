/**
 * PostgresRecordStore keeps the record-store contract, and the library's ledger over it keeps
 * the full storage contract (the suite runs both); each test in a schema of its own.
 */
import { it } from 'vitest';
import { PostgresRecordStore } from '../../src/storage/postgres/store.js';
import type { RecordStore } from '../../src/storage/record-store.js';
import { runRecordStoreContract } from '../../src/testing/record-store-suite/index.js';
import { dbDescribe, dropSchema, freshSchema, pool, usePostgres } from './postgres-setup.js';

usePostgres();

const schemas = new WeakMap<object, string>();

runRecordStoreContract(
  { describe: dbDescribe, it },
  {
    name: 'PostgresRecordStore',
    create: async (): Promise<RecordStore> => {
      const schema = freshSchema();
      const store = new PostgresRecordStore(pool, schema);
      schemas.set(store, schema);
      return store;
    },
    destroy: async (key: object) => {
      const schema = schemas.get(key);
      if (schema !== undefined) await dropSchema(schema);
    },
  },
);
