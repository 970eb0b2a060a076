/**
 * Joining the parts of long MO messages through the storage, below the router: a message
 * whose other parts never come goes on after the wait, once, though two instances each
 * hold one of its parts; a part stored long ago under the same carrier reference belongs to
 * an earlier message and is not joined with a new one's.
 */
import { describe, expect, it } from 'vitest';
import { MemoryStorage, type InboundPart } from '../../src/index.js';
import { InboundHandler } from '../../src/inbound/handler.js';
import { partsOfMessage } from '../../src/inbound/parts.js';
import { eventually } from '../helpers/poll.js';

/** One instance's handler on `storage`: MO messages stored, none forwarded (no owner). */
function instance(storage: MemoryStorage, errors: unknown[]): InboundHandler {
  return new InboundHandler({
    storage,
    emit: () => true,
    target: async () => null,
    keyword: () => null,
    webhooks: { lease: () => null, stored: () => undefined, notStored: () => undefined },
    confirm: () => undefined,
    error: (error) => errors.push(error),
    partsWaitMs: 50,
  });
}

describe('long MO messages through the storage', () => {
  it('a message whose third part never comes goes on after the wait as its two parts make it, once for two instances', async () => {
    const storage = new MemoryStorage();
    const errors: unknown[] = [];
    // Each instance's wait ends in one attempt to store the message: count them settled.
    const results: unknown[] = [];
    const insert = storage.insertInbound.bind(storage);
    storage.insertInbound = async (...args) => {
      const result = await insert(...args);
      results.push(result);
      return result;
    };
    const [a, b] = [instance(storage, errors), instance(storage, errors)];
    const at = Date.now();
    const mo = { from: '254700000091', to: '22021', receivedAt: at };
    await a.receive({ ...mo, text: 'first, ', part: { ref: 9, total: 3, seq: 1 } });
    await b.receive({ ...mo, text: 'second', part: { ref: 9, total: 3, seq: 2 } });
    expect(await storage.listInbound({ limit: 10 })).toEqual([]);
    const stored = await eventually(async () => {
      const list = await storage.listInbound({ limit: 10 });
      return list.length > 0 ? list : undefined;
    }, { what: 'the message passed on after the wait' });
    expect(stored.map((r) => r.text)).toEqual(['first, second']);
    // Both instances' waits are over, and the message is still stored once.
    await eventually(() => results.length === 2, { what: 'both waits over' });
    a.close();
    b.close();
    expect(results).toEqual([{ optOutChanged: false }, { optOutChanged: false, duplicate: true }]);
    expect((await storage.listInbound({ limit: 10 })).map((r) => r.text)).toEqual(['first, second']);
    expect(errors).toEqual([]);
  });

  it('parts received long before, under the same reference, are of an earlier message', () => {
    const old = (seq: number): InboundPart => ({ key: 'k', seq, total: 2, text: `old ${seq}`, receivedAt: 0 });
    const fresh: InboundPart = { key: 'k', seq: 1, total: 2, text: 'new 1', receivedAt: 3_600_000 };
    expect(partsOfMessage([fresh, old(2)], fresh, 600_000)).toEqual({ parts: [fresh], whole: false });
    const second: InboundPart = { ...fresh, seq: 2, text: 'new 2', receivedAt: 3_600_500 };
    expect(partsOfMessage([fresh, second], second, 600_000)).toEqual({ parts: [fresh, second], whole: true });
  });
});
