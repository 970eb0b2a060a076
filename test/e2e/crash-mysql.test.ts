/**
 * Router-level crash test on MariaDB (the library's ledger over `MysqlRecordStore`): a host
 * process is killed with SIGKILL under concurrent load and restarted on the same tables
 * (see crash-scenario.ts for what is asserted). Skips with a printed reason when MariaDB is
 * unreachable, unless SMS_OUTBOX_REQUIRE_SERVICES=1.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { afterAll, describe, it } from 'vitest';
import { createLedger } from '../../src/ledger/index.js';
import { MysqlRecordStore } from '../../src/storage/mysql/adapter.js';
import { eventually } from '../helpers/poll.js';
import { makeMysqlPool, mysqlUnavailable } from '../helpers/services.js';
import { runCrashScenario } from './crash-scenario.js';
import { hostMysqlThreadsFile } from './host-process.js';

const admin = makeMysqlPool(2);
const unavailable = await mysqlUnavailable(admin);
if (unavailable !== null) console.warn(`MariaDB crash e2e test skipped: ${unavailable}`);
const tablePrefix = `e2e_crash_${randomBytes(4).toString('hex')}_`;
const threadFiles = ['crash-gen-1', 'crash-gen-2'].map((id) => hostMysqlThreadsFile(id, tablePrefix));

afterAll(async () => {
  for (const file of threadFiles) rmSync(file, { force: true });
  if (unavailable === null) {
    const tables = ['messages', 'carrier_ids', 'idempotency', 'credit', 'unit_counters', 'schema_version', 'report_head'].map((t) => `\`${tablePrefix}${t}\``);
    await admin.query(`DROP TABLE IF EXISTS ${tables.join(', ')}`);
  }
  await admin.end();
});

/**
 * Waits until MariaDB has ended every connection of a killed host: a statement (a COMMIT
 * among them) its client sent before dying still runs to its end, and only then does the
 * server close the connection.
 */
async function hostConnectionsEnded(instanceId: string): Promise<void> {
  const ids = readFileSync(hostMysqlThreadsFile(instanceId, tablePrefix), 'utf8').split('\n').filter(Boolean).map(Number);
  if (ids.length === 0) return;
  await eventually(
    async () => {
      const [rows] = await admin.query(`SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE ID IN (?)`, [ids]);
      return Number((rows as { n: number }[])[0]!.n) === 0;
    },
    { timeoutMs: 15_000 },
  );
}

(unavailable === null ? describe : describe.skip)('MariaDB record store, through the router, across kill -9', () => {
  it('keeps every acknowledged message and finishes it after a restart, reports included', { timeout: 90_000 }, async () => {
    await runCrashScenario({
      name: 'mysql',
      storage: { kind: 'mysql', tablePrefix },
      openStorage: async () => {
        const pool = makeMysqlPool(4);
        const storage = createLedger(new MysqlRecordStore({ pool, tablePrefix }));
        await storage.ready?.();
        return { storage, close: () => pool.end() };
      },
      settle: hostConnectionsEnded,
    });
  });
});
