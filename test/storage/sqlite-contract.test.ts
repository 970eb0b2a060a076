/**
 * SqliteRecordStore keeps the record-store contract, each test on a file of its own, and the
 * library's ledger over it (SqliteStorage) keeps the full storage contract.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, it } from 'vitest';
import { SqliteRecordStore } from '../../src/storage/sqlite/adapter.js';
import { runRecordStoreContract } from '../../src/testing/record-store-suite/index.js';

const dir = mkdtempSync(join(tmpdir(), 'sms-outbox-sqlite-store-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

runRecordStoreContract({ describe, it }, { name: 'SqliteRecordStore', create: async () => new SqliteRecordStore({ path: join(dir, `store-${++files}.sqlite`) }) });
