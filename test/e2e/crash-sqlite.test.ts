/**
 * Router-level crash test on SQLite: a host process is killed with SIGKILL under
 * concurrent load and restarted on the same file (see crash-scenario.ts for what is asserted).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, it } from 'vitest';
import { SqliteStorage } from '../../src/storage/sqlite/adapter.js';
import { runCrashScenario } from './crash-scenario.js';

const dir = mkdtempSync(join(tmpdir(), 'sms-outbox-e2e-crash-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('SQLite storage, through the router, across kill -9', () => {
  it('keeps every acknowledged message and finishes it after a restart, reports included', { timeout: 90_000 }, async () => {
    const path = join(dir, 'outbox.sqlite');
    await runCrashScenario({
      name: 'sqlite',
      storage: { kind: 'sqlite', path },
      openStorage: async () => {
        const storage = new SqliteStorage({ path });
        await storage.ready();
        return { storage, close: () => storage.close() };
      },
    });
  });
});
