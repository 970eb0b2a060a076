/**
 * Router-level crash test on PostgreSQL: a host process is killed with SIGKILL under
 * concurrent load and restarted on the same schema (see crash-scenario.ts for what is
 * asserted). Skips with a printed reason when PostgreSQL is unreachable, unless
 * SMS_OUTBOX_REQUIRE_SERVICES=1.
 */
import { describe, it } from 'vitest';
import { PostgresStorage } from '../../src/storage/postgres/adapter.js';
import { runCrashScenario } from './crash-scenario.js';
import { hostStatementsSettled, makePool, postgresUnavailable, schemasOfThisFile } from './postgres-service.js';

const unavailable = await postgresUnavailable('PostgreSQL crash e2e test');
const newSchema = schemasOfThisFile(unavailable);

(unavailable === null ? describe : describe.skip)('PostgreSQL storage, through the router, across kill -9', () => {
  it('keeps every acknowledged message and finishes it after a restart, reports included', { timeout: 90_000 }, async () => {
    const schema = newSchema('e2e_crash');
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
