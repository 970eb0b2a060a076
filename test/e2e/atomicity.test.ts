/**
 * A request is atomic: a storage failure in the middle of a 100-message request answers
 * 500 and stores none of it, on the real databases. The failure is injected by a trigger
 * that refuses the 50th message, so the database itself aborts half-way through the insert.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import request from 'supertest';
import { afterAll, describe, expect, it } from 'vitest';
import { PostgresStorage } from '../../src/postgres.js';
import { SqliteStorage } from '../../src/sqlite.js';
import type { Storage } from '../../src/index.js';
import { createGateway, KEY, type TestGateway } from '../helpers/gateway.js';
import { makePool, postgresUnavailable } from '../helpers/services.js';
import { dropSchema, freshSchema } from './postgres-service.js';

/** 100 messages; the 50th carries the external id the trigger refuses. */
function hundred(prefix: string) {
  return {
    profile_code: '12345',
    messages: Array.from({ length: 100 }, (_, i) => ({
      recipient: '254712345678',
      message: `message ${i}`,
      external_id: i === 49 ? 'boom' : `${prefix}-${i}`,
    })),
  };
}

/** Sends a bad and a good request at once; checks the bad one stored nothing and the good one all. */
async function checkAtomic(storage: Storage, count: (prefix: string) => Promise<number>): Promise<void> {
  const gateway: TestGateway = createGateway({ storage, rateLimit: false });
  const errors: unknown[] = [];
  gateway.sms.on('error', ({ error }) => errors.push(error));
  try {
    await gateway.sms.ready();
    const good = { ...hundred('good'), messages: hundred('good').messages.map((m, i) => ({ ...m, external_id: `good-${i}` })) };
    const [bad, fine] = await Promise.all([
      request(gateway.app).post('/api/outbox/create').set('X-API-Key', KEY).send(hundred('bad')),
      request(gateway.app).post('/api/outbox/create').set('X-API-Key', KEY).send(good),
    ]);
    expect(bad.status).toBe(500);
    expect(bad.body).toEqual({ details: '500 server-error', code: 'SERVER_ERROR' });
    expect(String(errors[0])).toMatch(/injected failure/);
    expect(await count('bad')).toBe(0);
    // The request sharing its commit (SQLite groups them) is untouched.
    expect(fine.status).toBe(200);
    expect(await count('good')).toBe(100);
  } finally {
    await gateway.sms.close();
  }
}

const pool = makePool(4);
const unreachable = await postgresUnavailable(pool);
if (unreachable !== null) console.warn(`PostgreSQL atomicity test skipped: ${unreachable}`);
afterAll(() => pool.end());

describe('a storage failure in the middle of a 100-message request', () => {
  it('SQLite: answers 500 and stores none of it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sms-outbox-atomic-'));
    const db = new Database(join(dir, 'atomic.db'));
    try {
      const storage = new SqliteStorage({ database: db });
      await storage.ready();
      db.exec(`CREATE TRIGGER boom BEFORE INSERT ON sms_outbox_messages WHEN NEW.external_id = 'boom'
        BEGIN SELECT RAISE(ABORT, 'injected failure'); END`);
      const count = async (prefix: string) =>
        (db.prepare(`SELECT count(*) AS n FROM sms_outbox_messages WHERE external_id LIKE ? OR external_id = 'boom'`).get(`${prefix}-%`) as { n: number }).n;
      await checkAtomic(storage, count);
    } finally {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.skipIf(unreachable !== null)('PostgreSQL: answers 500 and stores none of it', async () => {
    const schema = freshSchema('atomic');
    try {
      const storage = new PostgresStorage({ pool, schema });
      await storage.ready();
      await pool.query(`CREATE FUNCTION "${schema}".boom() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN IF NEW.external_id = 'boom' THEN RAISE EXCEPTION 'injected failure'; END IF; RETURN NEW; END $$`);
      await pool.query(`CREATE TRIGGER boom BEFORE INSERT ON "${schema}".ledger_messages FOR EACH ROW EXECUTE FUNCTION "${schema}".boom()`);
      const count = async (prefix: string) =>
        Number(
          (await pool.query(`SELECT count(*) AS n FROM "${schema}".ledger_messages WHERE external_id LIKE $1 OR external_id = 'boom'`, [`${prefix}-%`]))
            .rows[0].n,
        );
      await checkAtomic(storage, count);
    } finally {
      await dropSchema(pool, schema);
    }
  });
});
