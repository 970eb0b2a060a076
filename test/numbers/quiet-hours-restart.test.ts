/**
 * A message held by quiet hours is kept by the storage, not by the process: a router that
 * accepted it is closed, a new one opened on the same SQLite file or PostgreSQL schema sends
 * it once the window ends, and not before.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { staticKeys, staticProfiles, type SmsRouter, type Storage } from '../../src/index.js';
import { SqliteStorage } from '../../src/storage/sqlite/adapter.js';
import { PostgresStorage } from '../../src/storage/postgres/adapter.js';
import { createGateway } from '../helpers/gateway.js';
import { eventually } from '../helpers/poll.js';
import { dbDescribe, dropSchema, freshSchema, pool, usePostgres } from '../storage/postgres-setup.js';
import { RecordingCarrier } from '../helpers/recording-carrier.js';

usePostgres();

/** 22:30 in Nairobi (UTC+3): inside 21:00-08:00, which ends at 05:00 UTC the next day. */
const LATE_EVENING = Date.UTC(2026, 5, 10, 19, 30);
const WINDOW_END = Date.UTC(2026, 5, 11, 5, 0);

const routers: SmsRouter[] = [];
afterEach(async () => {
  await Promise.all(routers.splice(0).map((sms) => sms.close()));
});

/** A router on `storage` whose clock reads `clock.at`, with a Kenyan bulk profile under quiet hours. */
function gatewayOn(storage: Storage, clock: { at: number }) {
  const carrier = new RecordingCarrier();
  const { app, sms } = createGateway({
    storage,
    now: () => clock.at,
    rateLimit: false,
    delivery: carrier,
    worker: { pollIntervalMs: 10 },
    verifyKey: staticKeys([{ key: 'k', id: 'shop' }]),
    // No timeZone: the Kenyan number's own zone (Africa/Nairobi) keeps the window.
    resolveProfile: staticProfiles([{ code: 'promo', owners: ['shop'], quietHours: { from: '21:00', to: '08:00' } }]),
  });
  routers.push(sms);
  const status = async (ref: string) => (await request(app).get(`/api/outbox/delivery-status/${ref}`).set('X-API-Key', 'k').expect(200)).body;
  return { app, sms, carrier, status };
}

/** Holds a message with one router, closes it, and sees a second router on a storage `open()` gives anew send it when the window ends. */
async function heldAcrossRestart(open: () => Storage): Promise<void> {
  const clock = { at: LATE_EVENING };
  const first = gatewayOn(open(), clock);
  const sent = await request(first.app)
    .post('/api/outbox/create')
    .set('X-API-Key', 'k')
    .send({ profile_code: 'promo', messages: [{ recipient: '254712345678', message: 'Sale tomorrow' }] })
    .expect(200);
  const ref = sent.body[0].message_ref as string;
  expect(await first.status(ref)).toMatchObject({ status: 'scheduled', send_at: new Date(WINDOW_END).toISOString() });
  await first.sms.close();
  expect(first.carrier.accepted).toEqual([]);

  // A minute before the end, the new router's sweeps find nothing due.
  clock.at = WINDOW_END - 60_000;
  const second = gatewayOn(open(), clock);
  await second.sms.ready();
  expect(await second.status(ref)).toMatchObject({ status: 'scheduled' });
  clock.at = WINDOW_END;
  await eventually(() => second.carrier.accepted.length === 1, { what: 'the held message submitted at the window end' });
  expect(second.carrier.accepted[0]!.ref).toBe(ref);
  await eventually(async () => (await second.status(ref)).status !== 'scheduled');
  expect(first.carrier.accepted).toEqual([]);
}

describe('a message held by quiet hours, after a restart', () => {
  const folders: string[] = [];
  afterAll(() => {
    for (const folder of folders) rmSync(folder, { recursive: true, force: true });
  });

  it('on SQLite: is sent by the new router at the window end', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'quiet-restart-'));
    folders.push(folder);
    await heldAcrossRestart(() => new SqliteStorage({ path: join(folder, 'outbox.db') }));
  });
});

dbDescribe('a message held by quiet hours, after a restart, on PostgreSQL', () => {
  const schemas: string[] = [];
  afterAll(async () => {
    for (const schema of schemas) await dropSchema(schema);
  });

  it('is sent by the new router at the window end', async () => {
    const schema = freshSchema();
    schemas.push(schema);
    await heldAcrossRestart(() => new PostgresStorage({ pool, schema }));
  });
});
