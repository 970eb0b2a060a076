/**
 * Cancel racing the worker: cancels sent while the worker claims and submits the same
 * messages. Whatever the interleaving, each message is either cancelled or given to the
 * carrier, never both, and the cancel's answer says which.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { afterAll, describe, expect, it } from 'vitest';
import { createGateway, KEY } from '../helpers/gateway.js';
import { eventually } from '../helpers/poll.js';
import { MemoryStorage, type DeliveryAdapter, type OutgoingPart, type Storage } from '../../src/index.js';
import { SqliteStorage } from '../../src/sqlite.js';
import { PostgresStorage } from '../../src/postgres.js';
import { makePool, postgresUnavailable, schemasOfThisFile } from './postgres-service.js';

const dir = mkdtempSync(join(tmpdir(), 'sms-outbox-cancel-race-'));
const unavailable = await postgresUnavailable('PostgreSQL cancel race test');
const schemaFor = schemasOfThisFile(unavailable);
const pool = unavailable === null ? makePool(8) : null;
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await pool?.end();
});

/** A carrier that takes a millisecond or two per part and remembers every ref it accepted. */
class CountingCarrier implements DeliveryAdapter {
  readonly accepted = new Map<string, number>();
  async start(): Promise<void> {}
  async submit(part: OutgoingPart) {
    await new Promise((resolve) => setTimeout(resolve, Math.random() * 2));
    this.accepted.set(part.ref, (this.accepted.get(part.ref) ?? 0) + 1);
    return { carrierId: `c-${part.ref}-${part.index}` };
  }
  async close(): Promise<void> {}
}

const ROUNDS = 15;
const PER_ROUND = 40;

const storages: [string, () => Storage, boolean][] = [
  ['memory', () => new MemoryStorage(), false],
  ['SQLite', () => new SqliteStorage({ path: join(dir, `${Math.random().toString(36).slice(2)}.sqlite`) }), false],
  ['PostgreSQL', () => new PostgresStorage({ pool: pool!, schema: schemaFor('cancel_race') }), unavailable !== null],
];

describe.each(storages)('cancel racing the worker (%s)', (_name, makeStorage, skip) => {
  it.skipIf(skip)(`each of ${ROUNDS * PER_ROUND} messages is cancelled or submitted, never both`, async () => {
    const carrier = new CountingCarrier();
    // Few slots: most of each request is stored unleased and claimed while the cancels come.
    const { app, sms } = createGateway({ storage: makeStorage(), delivery: carrier, rateLimit: false, worker: { concurrency: 2, pollIntervalMs: 5 } });
    const answeredCancelled = new Set<string>();
    const refs: string[] = [];
    try {
      for (let round = 0; round < ROUNDS; round++) {
        const body = {
          profile_code: '12345',
          messages: Array.from({ length: PER_ROUND }, (_, i) => ({ recipient: `2547000${String(i).padStart(5, '0')}`, message: 'Race', external_id: `r${round}` })),
        };
        const sent = await request(app).post('/api/outbox/create').set('X-API-Key', KEY).send(body);
        expect(sent.status).toBe(200);
        const roundRefs = (sent.body as { message_ref: string }[]).map((item) => item.message_ref);
        refs.push(...roundRefs);
        await Promise.all(
          roundRefs.map(async (ref) => {
            await new Promise((resolve) => setTimeout(resolve, Math.random() * 20));
            const res = await request(app).delete(`/api/outbox/messages/${ref}`).set('X-API-Key', KEY);
            expect(res.status).toBe(200);
            if ((res.body.cancelled as string[]).includes(ref)) answeredCancelled.add(ref);
          }),
        );
      }
      const states = new Map<string, string>();
      await eventually(
        async () => {
          for (const ref of refs) {
            if (states.get(ref) === 'cancelled' || states.get(ref) === 'submitted' || states.get(ref) === 'delivered') continue;
            const res = await request(app).get(`/api/outbox/delivery-status/${ref}`).set('X-API-Key', KEY);
            states.set(ref, res.body.status as string);
          }
          return refs.every((ref) => states.get(ref) !== 'queued');
        },
        { timeoutMs: 30_000 },
      );
      const both = refs.filter((ref) => states.get(ref) === 'cancelled' && carrier.accepted.has(ref));
      const neither = refs.filter((ref) => states.get(ref) !== 'cancelled' && !carrier.accepted.has(ref));
      expect(both, 'cancelled and submitted').toEqual([]);
      expect(neither, 'neither cancelled nor submitted').toEqual([]);
      expect(refs.filter((ref) => answeredCancelled.has(ref) !== (states.get(ref) === 'cancelled')), 'the answer says what happened').toEqual([]);
      // Both outcomes happened: the race was run, not won by one side every time.
      expect(answeredCancelled.size).toBeGreaterThan(0);
      expect(carrier.accepted.size).toBeGreaterThan(0);
    } finally {
      await sms.close();
    }
  }, 60_000);
});
