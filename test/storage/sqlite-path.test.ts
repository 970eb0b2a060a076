/**
 * README's first sample, `new SqliteStorage({ path: './data/sms.db' })`, must work where
 * `./data` does not exist yet.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteStorage } from '../../src/storage/sqlite/adapter.js';
import { buildNewMessage } from '../../src/testing/storage-suite/index.js';

const dir = mkdtempSync(join(tmpdir(), 'sms-outbox-sqlite-path-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('SqliteStorage path', () => {
  it('creates the missing folders of the file, and keeps what is stored there', async () => {
    const path = join(dir, 'data', 'nested', 'sms.db');
    expect(existsSync(join(dir, 'data'))).toBe(false);
    const storage = new SqliteStorage({ path });
    const message = buildNewMessage();
    await storage.insertMessages([message]);
    await storage.close();
    expect(existsSync(path)).toBe(true);

    // The folder now exists: opening again is no error and finds the message.
    const again = new SqliteStorage({ path });
    expect((await again.getMessage(message.principalId, message.ref))?.state).toBe('queued');
    await again.close();
  });

  it('accepts a relative path, as in the README sample', async () => {
    // Relative to the working directory, as the sample's './data/sms.db' is.
    const path = `./${relative(process.cwd(), join(dir, 'relative', 'data', 'sms.db'))}`;
    const storage = new SqliteStorage({ path });
    await storage.ready();
    await storage.close();
    expect(existsSync(join(dir, 'relative', 'data', 'sms.db'))).toBe(true);
  });
});
