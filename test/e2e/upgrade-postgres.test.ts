/**
 * A router over a schema the earlier PostgreSQL adapter wrote (test/fixtures/postgres-v11-
 * dump.sql): its first start moves the messages into the record store's tables, then it
 * answers their status as before and delivers the queued and due scheduled ones. Skips with
 * a printed reason when PostgreSQL is unreachable, unless SMS_OUTBOX_REQUIRE_SERVICES=1.
 */
import { describe, expect, it } from 'vitest';
import { eventually } from '../helpers/poll.js';
import { loadLegacyDump } from '../helpers/postgres-legacy.js';
import { lookup } from './client.js';
import { startHost } from './host-process.js';
import { makePool, postgresUnavailable, schemasOfThisFile } from './postgres-service.js';

const unavailable = await postgresUnavailable('PostgreSQL upgrade e2e test');
const newSchema = schemasOfThisFile(unavailable);

/** The dump's messages the router should deliver: queued (one under an ended lease of an earlier instance, one charged) and a scheduled one long due. */
const TO_DELIVER = ['fx-queued-1', 'fx-queued-2', 'fx-leased', 'fx-charged', 'fx-scheduled-due'];

(unavailable === null ? describe : describe.skip)('a router over the earlier PostgreSQL adapter\'s schema', () => {
  it('answers the status of every stored message and delivers the queued ones', { timeout: 60_000 }, async () => {
    const schema = newSchema('e2e_upgrade');
    const pool = makePool(1);
    try {
      await loadLegacyDump(pool, schema);
    } finally {
      await pool.end();
    }
    const host = await startHost({ storage: { kind: 'postgres', schema }, simulator: { outcomes: { delivered: 100 }, latencyMs: [1, 5] } });
    try {
      const stateOf = async (ref: string) => (await lookup(host.base, ref)).map((item) => item.status);
      expect(await stateOf('fx-failed')).toEqual(['failed']);
      expect(await stateOf('fx-delivered')).toEqual(['delivered']);
      expect(await stateOf('fx-submitted')).toEqual(['submitted']);
      expect(await stateOf('fx-scheduled-later')).toEqual(['scheduled']);
      for (const ref of TO_DELIVER) {
        await eventually(async () => (await stateOf(ref))[0] === 'delivered', { timeoutMs: 30_000, what: `${ref} to be delivered` });
      }
      expect(host.errors).toEqual([]);
    } finally {
      await host.stop();
    }
  });
});
