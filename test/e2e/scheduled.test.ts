/**
 * Scheduled sends across crashes and instances: a message sent for later survives a kill -9
 * of its host and goes once after the restart; two PostgreSQL instances send each scheduled
 * message once. Real host processes (host-process.ts), real clocks.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/poll.js';
import { lookup, quickBody, send, type AckedMessage } from './client.js';
import { startHost, type HostConfig, type HostProcess, type SubmitLine } from './host-process.js';
import { postgresUnavailable, schemasOfThisFile } from './postgres-service.js';

const dir = mkdtempSync(join(tmpdir(), 'sms-outbox-e2e-scheduled-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const unavailable = await postgresUnavailable('PostgreSQL scheduled-send e2e test');
const schemaFor = schemasOfThisFile(unavailable);

/** Every part accepted at once and delivered: the count of submits is the count of sends. */
const SIMULATOR: HostConfig['simulator'] = { outcomes: { delivered: 1 }, latencyMs: [1, 5] };
/** One-part texts, so a message's submits are its sends. */
const TEXTS = ['Your appointment is at 9:00', 'Reminder: pay by Friday'];

/** Sends `count` messages due `inMs` from now, to `host`. */
async function sendLater(host: HostProcess, count: number, externalId: string, inMs: number): Promise<AckedMessage[]> {
  const body = { ...JSON.parse(quickBody(count, externalId, null, TEXTS)), send_at: new Date(Date.now() + inMs).toISOString() };
  return send(host.base, JSON.stringify(body), externalId, false);
}

/** How many times the carrier accepted each ref, over every host's submits. */
function sendsByRef(...hosts: HostProcess[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const line of hosts.flatMap((host): SubmitLine[] => host.submits)) counts.set(line.ref, (counts.get(line.ref) ?? 0) + 1);
  return counts;
}

/** Waits until every message with `externalId` has left `scheduled` and `queued`. */
async function allGone(host: HostProcess, externalId: string, count: number): Promise<void> {
  await eventually(
    async () => {
      const items = await lookup(host.base, externalId);
      return items.length === count && items.every((item) => item.status !== 'scheduled' && item.status !== 'queued');
    },
    { timeoutMs: 30_000 },
  );
}

describe('scheduled sends', () => {
  it('a scheduled message survives a kill -9 of its host and is sent once, after the restart, when due', async () => {
    const config: HostConfig = { storage: { kind: 'sqlite', path: join(dir, 'outbox.sqlite') }, simulator: SIMULATOR };
    const first = await startHost(config);
    let second: HostProcess | null = null;
    try {
      const acked = await sendLater(first, 20, 'crash-later', 2_000);
      expect((await lookup(first.base, 'crash-later')).map((item) => item.status)).toEqual(Array(20).fill('scheduled'));
      await first.kill();
      expect(first.submits, 'nothing was due before the kill').toEqual([]);
      second = await startHost(config);
      await allGone(second, 'crash-later', 20);
      const sends = sendsByRef(first, second);
      expect(acked.map((m) => sends.get(m.ref) ?? 0)).toEqual(Array(20).fill(1));
    } finally {
      await first.kill();
      await second?.stop();
    }
  }, 60_000);

  it.skipIf(unavailable !== null)('two PostgreSQL instances send each scheduled message once', async () => {
    const schema = schemaFor('e2e_scheduled');
    const hosts = await Promise.all(
      ['a', 'b'].map((instanceId) => startHost({ storage: { kind: 'postgres', schema }, instanceId, simulator: SIMULATOR, worker: { pollIntervalMs: 20 } })),
    );
    try {
      // One reference per host: a lookup answers at most 100 messages.
      const acked = [...(await sendLater(hosts[0]!, 100, 'later-a', 1_500)), ...(await sendLater(hosts[1]!, 100, 'later-b', 1_500))];
      await allGone(hosts[0]!, 'later-a', 100);
      await allGone(hosts[0]!, 'later-b', 100);
      expect(hosts.flatMap((host) => host.errors)).toEqual([]);
      const sends = sendsByRef(...hosts);
      const notOnce = acked.filter((m) => sends.get(m.ref) !== 1).map((m) => [m.ref, sends.get(m.ref) ?? 0]);
      expect(notOnce).toEqual([]);
    } finally {
      await Promise.all(hosts.map((host) => host.stop()));
    }
  }, 60_000);
});
