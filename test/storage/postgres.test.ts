/**
 * PostgresStorage: the storage contract suite, its options, its schema and lifecycle, and
 * values kept exact.
 */
import { describe, expect, it } from 'vitest';
import type { Storage } from '../../src/storage/contract.js';
import { PostgresStorage } from '../../src/storage/postgres/adapter.js';
import { PostgresStorage as FromEntry } from '../../src/postgres.js';
import { buildNewMessage, runStorageContract } from '../../src/testing/storage-suite/index.js';
import { ALL_VERSIONS, dbDescribe, dropSchema, freshSchema, pool, SCHEMA_TABLES, usePostgres } from './postgres-setup.js';

usePostgres();

const schemas = new WeakMap<Storage, string>();

runStorageContract(
  { describe: dbDescribe, it },
  {
    name: 'PostgresStorage',
    create: async () => {
      const schema = freshSchema();
      const storage = new PostgresStorage({ pool, schema });
      schemas.set(storage, schema);
      return storage;
    },
    destroy: async (storage) => {
      const schema = schemas.get(storage);
      if (schema !== undefined) await dropSchema(schema);
    },
  },
);


describe('PostgresStorage options', () => {
  it('is what sms-outbox/postgres exports', () => {
    expect(FromEntry).toBe(PostgresStorage);
  });

  it('rejects a schema name that is not a plain identifier', () => {
    for (const schema of ['', '1abc', 'a-b', 'x"; DROP SCHEMA public; --', 'a'.repeat(64), 'caf\u00e9']) {
      expect(() => new PostgresStorage({ pool, schema })).toThrow(TypeError);
    }
  });

  it('rejects a misspelt option with a hint', () => {
    expect(() => new PostgresStorage({ pool, scheme: 'x' } as never)).toThrow(/Did you mean `schema`\?/);
  });

  it('rejects a missing pool', () => {
    expect(() => new PostgresStorage({} as never)).toThrow(/pool/);
    expect(() => new PostgresStorage({ pool: 'postgres://localhost' } as never)).toThrow(/pool/);
  });
});

dbDescribe('PostgresStorage', () => {
  it('creates its tables in the schema it is given, and ready() is memoised', async () => {
    const schema = freshSchema();
    const storage = new PostgresStorage({ pool, schema });
    try {
      const first = storage.ready();
      expect(storage.ready()).toBe(first);
      await first;
      const { rows } = await pool.query<{ table_name: string }>(
        'SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name',
        [schema],
      );
      expect(rows.map((row) => row.table_name)).toEqual(SCHEMA_TABLES);
      const versions = await pool.query(`SELECT version FROM "${schema}".migrations ORDER BY version`);
      expect(versions.rows).toEqual(ALL_VERSIONS);
    } finally {
      await dropSchema(schema);
    }
  });

  it('creates the schema on first use without an explicit ready()', async () => {
    const schema = freshSchema();
    const storage = new PostgresStorage({ pool, schema });
    try {
      const message = buildNewMessage();
      await storage.insertMessages([message]);
      expect((await storage.getMessage(message.principalId, message.ref))?.state).toBe('queued');
    } finally {
      await dropSchema(schema);
    }
  });

  it('close() leaves the host pool open', async () => {
    const schema = freshSchema();
    const storage = new PostgresStorage({ pool, schema });
    try {
      await storage.ready();
      await storage.close();
      expect((await pool.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    } finally {
      await dropSchema(schema);
    }
  });

  it('keeps times past 2^31 ms exact as numbers', async () => {
    const schema = freshSchema();
    const storage = new PostgresStorage({ pool, schema });
    try {
      const message = buildNewMessage({ createdAt: 4_102_444_800_123 });
      await storage.insertMessages([message]);
      const record = await storage.getMessage(message.principalId, message.ref);
      expect(record?.createdAt).toBe(4_102_444_800_123);
      expect(record?.updatedAt).toBe(4_102_444_800_123);
    } finally {
      await dropSchema(schema);
    }
  });

  it('stores text with quotes, backslashes and non-BMP characters unchanged', async () => {
    const schema = freshSchema();
    const storage = new PostgresStorage({ pool, schema });
    try {
      const text = `it's "quoted" \\ {a,b} NULL \u{1f600} \u00e9`;
      const message = buildNewMessage({ text, externalId: 'NULL', callbackSecret: '{}' });
      await storage.insertMessages([message]);
      const record = await storage.getMessage(message.principalId, message.ref);
      expect(record?.text).toBe(text);
      expect(record?.externalId).toBe('NULL');
      expect(record?.callbackSecret).toBe('{}');
      expect(record?.callbackUrl).toBeNull();
    } finally {
      await dropSchema(schema);
    }
  });
});
