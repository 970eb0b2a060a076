/**
 * The credit ledger across kill -9, on SQLite through the router: a host process charges
 * every request under load, the carrier refuses some parts at submission (their units come
 * back) and ends others undelivered (theirs stay, under `refunds: 'unsent'`, as do those whose
 * receipts died with the host and end `expired`), and the host is killed mid-stream and restarted on the same file. Once every message has ended, the ledger
 * must be exact: each stored message charged once, each refund given once, and the balance
 * what the charges and refunds add up to; no charge without its message.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { fromColumns, ROW_COLUMNS } from '../../src/storage/sql/rows.js';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteStorage } from '../../src/storage/sqlite/adapter.js';
import { quickBody, send, statusesOnceEnded, UnexpectedStatus, type AckedMessage } from './client.js';
import { HOST_PRINCIPAL, startHost, type HostConfig, type HostProcess } from './host-process.js';

const dir = mkdtempSync(join(tmpdir(), 'sms-outbox-e2e-credit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** One-part and two-part texts, so a message may be refused after its first part went. */
const TEXTS = ['Your code is 4711', `Statement: ${'balance KES 1,500 '.repeat(12)}`];
const START_BALANCE = 1_000_000;

/** Sends requests of 1 to 5 messages from `clients` senders until `stop` says so or the host goes. */
async function load(host: HostProcess, clients: number, stop: () => boolean, tag: string): Promise<AckedMessage[]> {
  const acked: AckedMessage[] = [];
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      for (let n = 0; !stop(); n++) {
        const externalId = `${tag}-${client}-${n}`;
        try {
          acked.push(...(await send(host.base, quickBody(1 + (n % 5), externalId, null, TEXTS), externalId, false)));
        } catch (error) {
          if (error instanceof UnexpectedStatus) throw error;
          return;
        }
      }
    }),
  );
  return acked;
}


describe('the credit ledger on SQLite, through the router, across kill -9', () => {
  it('charges each stored message once and refunds each unsent part once', { timeout: 90_000 }, async () => {
    const path = join(dir, 'credit.sqlite');
    const setup = new SqliteStorage({ path });
    await setup.topUpCredit(HOST_PRINCIPAL, START_BALANCE, Date.now());
    await setup.close();
    const config: HostConfig = {
      storage: { kind: 'sqlite', path },
      simulator: { outcomes: { delivered: 70, sender_name_blacklisted: 15, absent_subscriber: 10, throttled: 5 } },
      credit: { refunds: 'unsent' },
      // The simulator's receipts die with a killed host: those messages end `expired` after this.
      worker: { receiptTimeoutMs: 3_000 },
    };

    let host = await startHost(config);
    let stopped = false;
    const first = load(host, 8, () => stopped, 'before');
    // Killed while requests, submissions and receipts are all in flight.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    await host.kill();
    const acked = await first;
    expect(acked.length).toBeGreaterThan(50);

    host = await startHost(config);
    let stopAfter = false;
    const after = load(host, 4, () => stopAfter, 'after');
    await new Promise((resolve) => setTimeout(resolve, 500));
    stopAfter = true;
    acked.push(...(await after));
    const statuses = await statusesOnceEnded(host.base, acked, 45_000);
    await host.stop();
    stopped = true;
    expect(acked.filter((m) => !['delivered', 'undelivered', 'rejected', 'expired'].includes(statuses.get(m.ref)?.status ?? 'open'))).toEqual([]);

    const db = new Database(path, { readonly: true });
    try {
      // The rows as the record store keeps them: an open message holds its charge, an ended one has settled it.
      const rows = (db.prepare(`SELECT ${ROW_COLUMNS} FROM sms_outbox_messages`).all() as Record<string, unknown>[]).map(fromColumns);
      const balance = (db.prepare('SELECT balance FROM sms_outbox_credit WHERE principal_id = ?').get(HOST_PRINCIPAL) as { balance: number }).balance;
      const messages = rows.map((row) => ({ ref: row.record.ref, state: row.record.state, sms_count: row.record.smsCount, parts: row.record.parts, charge: row.book.charge }));
      let spent = 0;
      const refundedStates = new Set<string>();
      for (const m of messages) {
        const ended = !['queued', 'submitted', 'scheduled'].includes(m.state);
        expect(m.charge === null, `${m.ref} (${m.state}): charge settled once ended, held while open`).toBe(ended);
        const unsent = m.parts.filter((part) => part.carrierId === null).length;
        const expected = m.state === 'delivered' || !ended ? 0 : unsent;
        if (expected > 0) refundedStates.add(m.state);
        spent += m.sms_count - expected;
      }
      expect(balance).toBe(START_BALANCE - spent);
      expect(refundedStates, 'some messages were refused at submission and refunded').toContain('rejected');
      expect(messages.some((m) => m.state === 'undelivered'), 'some undelivered messages kept their units').toBe(true);
    } finally {
      db.close();
    }
  });
});
