/**
 * The retention sweep: what it deletes with `retention` on (ended messages and their pulled
 * reports, once older than `maxAge`) and with `retention: false`.
 * The parts of long MO messages are the router's scratch data, read again only within
 * minutes of their arrival, so they go either way, as expired idempotency keys do.
 */
import { describe, expect, it } from 'vitest';
import { MemoryStorage } from '../../src/storage/memory/adapter.js';
import type { InboundPart } from '../../src/storage/contract.js';
import { RETENTION_DEFAULTS } from '../../src/worker/options.js';
import { retentionSweep } from '../../src/worker/retention.js';
import { outcome } from '../../src/lifecycle/states.js';
import { buildNewMessage } from '../../src/testing/storage-suite/index.js';

const T0 = 1_700_000_000_000;
const DAY = 86_400_000;

const part = (seq: number, receivedAt: number): InboundPart => ({ key: 'long-mo', seq, total: 3, text: `part ${seq}`, receivedAt });

describe('retention sweep', () => {
  it('with retention: false keeps the messages but still deletes MO parts older than the default age', async () => {
    const storage = new MemoryStorage();
    const message = { ref: 'mo-1', principalId: null, profileCode: null, from: '254700000001', to: '22021', text: 'Hi', receivedAt: T0, callbackUrl: null, callbackSecret: null, uid: null };
    await storage.insertInbound(message);
    await storage.storeInboundPart!(part(1, T0));
    const errors: unknown[] = [];
    const sweep = retentionSweep(storage, false, () => T0 + RETENTION_DEFAULTS.maxAgeMs + 1, (_name, event) => errors.push(event));
    expect(sweep).not.toBeNull();
    await sweep!.runNow();
    await sweep!.close();
    expect(errors).toEqual([]);
    const later = part(2, T0 + RETENTION_DEFAULTS.maxAgeMs + 2);
    expect(await storage.storeInboundPart!(later)).toEqual([later]);
    expect((await storage.listInbound({ limit: 10 })).map((m) => m.ref)).toEqual(['mo-1']);
  });

  it('deletes ended messages and their pulled reports older than maxAge, and keeps the newer', async () => {
    const storage = new MemoryStorage();
    const [old, recent] = [buildNewMessage({ principalId: 'key-r' }), buildNewMessage({ principalId: 'key-r' })];
    await storage.insertMessages([old, recent]);
    await storage.finish(old.ref, outcome('failed', 'expired'), T0);
    await storage.finish(recent.ref, outcome('failed', 'expired'), T0 + 5 * DAY);
    const config = { ...RETENTION_DEFAULTS, maxAgeMs: 2 * DAY };
    const sweep = retentionSweep(storage, config, () => T0 + 3 * DAY, () => undefined)!;
    await sweep.runNow();
    await sweep.close();
    expect(await storage.getMessage('key-r', old.ref)).toBeNull();
    expect((await storage.readReports!('key-r', null, 10)).map((entry) => entry.message.ref)).toEqual([recent.ref]);
  });
});
