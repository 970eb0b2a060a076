/**
 * Example: a host that keeps its customers' API keys and sender profiles in its own
 * database. Keys are stored as SHA-256 digests only, so a leaked table leaks no key.
 *
 * Run it: `npx tsx examples/host-with-key-database.ts` (on `PORT`, default 3000). In your app,
 * import from `sms-outbox` instead of `../src/index.js`.
 */
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import express from 'express';
import { createSmsRouter, type KeyVerifier, type ProfileResolver, type Scope } from '../src/index.js';

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** The running example. */
export interface HostWithKeyDatabase {
  /** Origin of the host app, e.g. `http://127.0.0.1:3000`. */
  url: string;
  /** Creates a key for a customer and returns it; only its digest is stored. */
  issueKey(customerId: string, options?: { premium?: boolean }): string;
  /** Refuses a customer's keys from now on (403). */
  disableCustomer(customerId: string): void;
  /** Lets a customer send under a profile code, from one sender address. */
  addProfile(code: string, customerId: string, sender: string): void;
  /** Stops the server and the router, and closes the database. */
  stop(): Promise<void>;
}

/** Starts the host app on `port` (default: any free one) with the key database at `path`. */
export async function startHostWithKeyDatabase(options: { port?: number; path?: string } = {}): Promise<HostWithKeyDatabase> {
  const db = new Database(options.path ?? ':memory:');
  db.exec(`
    CREATE TABLE IF NOT EXISTS api_keys (
      key_sha256 TEXT PRIMARY KEY, customer_id TEXT NOT NULL,
      premium INTEGER NOT NULL DEFAULT 0, disabled INTEGER NOT NULL DEFAULT 0);
    CREATE TABLE IF NOT EXISTS profiles (code TEXT PRIMARY KEY, customer_id TEXT NOT NULL, sender TEXT NOT NULL);
  `);
  const findKey = db.prepare<[string], { customer_id: string; premium: number; disabled: number }>(
    'SELECT customer_id, premium, disabled FROM api_keys WHERE key_sha256 = ?',
  );
  const findProfile = db.prepare<[string, string], { code: string; sender: string }>(
    'SELECT code, sender FROM profiles WHERE code = ? AND customer_id = ?',
  );

  // A lookup by digest reveals through its timing at most something about a digest, which
  // says nothing about any key. better-sqlite3 answers in microseconds, so no cache is needed.
  const verifyKey: KeyVerifier = (key) => {
    const row = findKey.get(sha256(key));
    if (row === undefined) return null;
    const scopes: Scope[] = row.premium === 1 ? ['quick', 'premium'] : ['quick'];
    return { id: row.customer_id, scopes, disabled: row.disabled === 1 };
  };
  // Another customer's profile answers the same 422 as an unknown one.
  const resolveProfile: ProfileResolver = (code, principal) => {
    const row = findProfile.get(code, principal.id);
    return row === undefined ? null : { code: row.code, senders: [row.sender] };
  };

  const sms = createSmsRouter({ verifyKey, resolveProfile });
  const app = express();
  app.use(sms);
  const server = app.listen(options.port ?? 0, '127.0.0.1');
  await once(server, 'listening');

  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    issueKey(customerId, { premium = false } = {}) {
      const key = randomBytes(24).toString('base64url');
      db.prepare('INSERT INTO api_keys (key_sha256, customer_id, premium) VALUES (?, ?, ?)').run(sha256(key), customerId, premium ? 1 : 0);
      return key;
    },
    disableCustomer(customerId) {
      db.prepare('UPDATE api_keys SET disabled = 1 WHERE customer_id = ?').run(customerId);
    },
    addProfile(code, customerId, sender) {
      db.prepare('INSERT INTO profiles (code, customer_id, sender) VALUES (?, ?, ?)').run(code, customerId, sender);
    },
    async stop() {
      await new Promise((resolve) => server.close(resolve));
      await sms.close();
      db.close();
    },
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const host = await startHostWithKeyDatabase({ port: Number(process.env.PORT || 3000) });
  host.addProfile('12345', 'acme', 'ACME');
  console.log(`listening on ${host.url}; X-API-Key for acme: ${host.issueKey('acme')}`);
}
