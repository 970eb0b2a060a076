/**
 * Router-level crash test on PostgreSQL: a host process is killed with SIGKILL under
 * concurrent load and restarted on the same schema (see crash-scenario.ts for what is
 * asserted). Skips with a printed reason when PostgreSQL is unreachable, unless
 * SMS_OUTBOX_REQUIRE_SERVICES=1.
 */
import { afterAll, describe, it } from 'vitest';
import { PostgresStorage } from '../../src/storage/postgres/adapter.js';
import { runCrashScenario } from './crash-scenario.js';
import { dropSchema, freshSchema, hostStatementsSettled, makePool, postgresUnavailable } from './postgres-service.js';

const unavailable = await postgresUnavailable('PostgreSQL crash e2e test');
const schemas: string[] = [];

afterAll(async () => {
  if (unavailable !== null) return;
  const pool = makePool(1);
  for (const schema of schemas) await dropSchema(pool, schema);
  await pool.end();
});

(unavailable === null ? describe : describe.skip)('PostgreSQL storage, through the router, across kill -9', () => {
  it('keeps every acknowledged message and finishes it after a restart, reports included', { timeout: 90_000 }, async () => {
    const schema = freshSchema('e2e_crash');
    schemas.push(schema);
    await runCrashScenario({
      name: 'postgres',
      storage: { kind: 'postgres', schema },
      openStorage: async () => {
        const pool = makePool(4);
        const storage = new PostgresStorage({ pool, schema });
        await storage.ready();
        return { storage, close: () => pool.end() };
      },
      settle: hostStatementsSettled,
    });
  });
});
