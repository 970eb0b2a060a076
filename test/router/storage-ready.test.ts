/**
 * The router waits for the storage's `ready()` before any call reaches it: the host's own
 * calls through `router.credit` and `router.optOuts` made right after `createSmsRouter`
 * included, as a storage that makes its tables in `ready()` needs.
 */
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryStorage, type Storage } from '../../src/index.js';
import { createGateway, KEY, type TestGateway } from '../helpers/gateway.js';

/** The `open` of every slow storage made, so that a failed test's router can still close. */
const opens: (() => void)[] = [];

/** A memory storage whose `ready()` ends only when `open()` is called, and that records every call made before. */
function slowReadyStorage() {
  const inner = new MemoryStorage();
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  let isReady = false;
  let readyCalls = 0;
  const tooEarly: string[] = [];
  const storage = new Proxy(inner, {
    get(target, name, receiver) {
      if (name === 'ready') {
        return async () => {
          readyCalls++;
          await opened;
          isReady = true;
        };
      }
      const value = Reflect.get(target, name, receiver) as unknown;
      if (typeof value !== 'function' || typeof name !== 'string' || name === 'constructor') return value;
      return (...args: unknown[]) => {
        if (!isReady && name !== 'close') tooEarly.push(name);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  }) as Storage;
  opens.push(open);
  return { storage, open, tooEarly, readyCalls: () => readyCalls };
}

/** Lets every pending promise turn and I/O callback run, so a call that does not wait would have reached storage. */
const settleTurns = () => new Promise<void>((resolve) => setImmediate(resolve));

let gateway: TestGateway | undefined;
afterEach(async () => {
  for (const open of opens.splice(0)) open();
  await gateway?.sms.close();
  gateway = undefined;
});

describe("the router and the storage's ready()", () => {
  it('sms.credit.topUp and balance called right after createSmsRouter wait for ready()', async () => {
    const slow = slowReadyStorage();
    gateway = createGateway({ storage: slow.storage, credit: { ledger: 'storage' } });
    const topUp = gateway.sms.credit!.topUp('acme', 10);
    const balance = gateway.sms.credit!.balance('acme');
    await settleTurns();
    expect(slow.tooEarly).toEqual([]);
    slow.open();
    expect(await topUp).toBe(10);
    expect(await balance).toBeGreaterThanOrEqual(0);
    expect(slow.tooEarly).toEqual([]);
    expect(slow.readyCalls()).toBe(1);
  });

  it('sms.optOuts called right after createSmsRouter waits for ready()', async () => {
    const slow = slowReadyStorage();
    gateway = createGateway({ storage: slow.storage });
    const added = gateway.sms.optOuts.add('22021', '254712345678');
    const has = gateway.sms.optOuts.has('22021', '254712345678');
    await settleTurns();
    expect(slow.tooEarly).toEqual([]);
    slow.open();
    expect(await added).toBe(true);
    expect(typeof (await has)).toBe('boolean');
    expect(await gateway.sms.optOuts.list()).toHaveLength(1);
    expect(slow.tooEarly).toEqual([]);
    expect(slow.readyCalls()).toBe(1);
  });

  it('a request and a host call made before ready() ends share its one call', async () => {
    const slow = slowReadyStorage();
    gateway = createGateway({ storage: slow.storage });
    const answer = request(gateway.app)
      .post('/api/outbox/create')
      .set('X-API-Key', KEY)
      .send({ profile_code: '12345', messages: [{ recipient: '254712345678', message: 'Hello' }] })
      .then((res) => res);
    const optedOut = gateway.sms.optOuts.has('22021', '254712345678');
    await settleTurns();
    expect(slow.tooEarly).toEqual([]);
    slow.open();
    expect(await optedOut).toBe(false);
    expect((await answer).status).toBe(200);
    expect(slow.tooEarly).toEqual([]);
    expect(slow.readyCalls()).toBe(1);
  });
});
