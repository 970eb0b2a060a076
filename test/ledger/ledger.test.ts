import { describe, expect, it, vi } from 'vitest';
import { createLedger } from '../../src/ledger/index.js';
import { KnownRows } from '../../src/ledger/known-rows.js';
import { buildNewMessage, DELIVERED, FAILED, LEASE, receipt, T0 } from '../../src/testing/storage-suite/fixtures.js';
import type { MessageRow, MessageWrite } from '../../src/storage/record-store.js';
import { NaiveRecordStore } from '../helpers/naive-record-store.js';

/** A naive store whose writes can be made to lose, as if another writer always got there first. */
class ContendedStore extends NaiveRecordStore {
  losing = false;
  writes = 0;
  override async writeMessages(writes: readonly MessageWrite[]): Promise<boolean[]> {
    this.writes += writes.length;
    return this.losing ? writes.map(() => false) : super.writeMessages(writes);
  }
}

/** Every row of the store, whatever its timer, by ref (the naive store's scan). */
async function timers(store: NaiveRecordStore, ...refs: string[]): Promise<[string | null, number | null][]> {
  const rows = await Promise.all(refs.map((ref) => store.getMessage(ref)));
  return rows.map((row) => [row!.timer, row!.timerAt]);
}

describe('ledger', () => {
  it("places two requests of one principal accepted at once one after the other, so it is not served twice in another's turn", async () => {
    const ledger = createLedger(new NaiveRecordStore());
    const a1 = [1, 2, 3].map(() => buildNewMessage({ principalId: 'a', createdAt: T0 }));
    const a2 = [1, 2, 3].map(() => buildNewMessage({ principalId: 'a', createdAt: T0 }));
    const b = [1, 2, 3].map(() => buildNewMessage({ principalId: 'b', createdAt: T0 }));
    // Both of a's requests read the queue before either is stored.
    await Promise.all([ledger.insertMessages(a1), ledger.insertMessages(a2)]);
    await ledger.insertMessages(b);
    const claimed = await ledger.claimMessages({ owner: 'w', limit: 9, leaseMs: LEASE, now: T0 });
    const owners = claimed.map((message) => message.principalId).join('');
    // a's six in acceptance order, b's three taking their turns among them.
    expect(owners).toBe('abababaaa');
  });

  it('a change whose write loses to another instance reads the row again and applies its rule to what is stored', async () => {
    const store = new NaiveRecordStore();
    const mine = createLedger(store);
    const other = createLedger(store);
    const message = buildNewMessage({ smsCount: 2 });
    // Leased at insert: this ledger keeps the row and writes without reading it first.
    await mine.insertMessages([message], { owner: 'w1', until: T0 + LEASE });
    // Another instance records part 0 (its lease view is its own affair): the row moves on.
    expect((await other.recordSubmission(message.ref, 0, 'c0', T0 + 5)).kind).toBe('part');
    // This ledger's kept row is stale; its write loses, and it decides again on the stored row.
    const result = await mine.recordSubmission(message.ref, 1, 'c1', T0 + 6);
    expect(result.kind).toBe('submitted');
    const stored = await mine.getMessage(message.principalId, message.ref);
    expect(stored?.parts.map((part) => part.carrierId)).toEqual(['c0', 'c1']);
    expect(stored?.state).toBe('submitted');
  });

  it("keeps a record's optional fields (number, country, hold reason, trace) through every change it makes", async () => {
    const ledger = createLedger(new NaiveRecordStore());
    const optional = { recipientAsSent: '0712345678', country: 'KE', numberType: 'mobile', holdReason: 'quiet_hours', traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' } as const;
    const message = { ...buildNewMessage({ recipient: '254712345678' }), ...optional };
    await ledger.insertMessages([message]);
    await ledger.claimMessages({ owner: 'w', limit: 1, leaseMs: LEASE, now: T0 });
    await ledger.recordSubmission(message.ref, 0, 'c-opt', T0 + 1);
    await ledger.applyReceipt(receipt('c-opt', DELIVERED));
    const stored = await ledger.getMessage(message.principalId, message.ref);
    expect(stored?.state).toBe('delivered');
    expect(stored).toMatchObject(optional);
  });

  it('gives up with an error when every write loses', async () => {
    const store = new ContendedStore();
    const ledger = createLedger(store);
    const message = buildNewMessage();
    await ledger.insertMessages([message]);
    store.losing = true;
    await expect(ledger.finish(message.ref, FAILED, T0 + 1)).rejects.toThrow(/gave up/);
    expect(store.writes).toBe(20);
    store.losing = false;
    expect((await ledger.getMessage(message.principalId, message.ref))?.state).toBe('queued');
  });

  it('a refused idempotency key throws and stores nothing', async () => {
    const ledger = createLedger(new NaiveRecordStore());
    const record = { principalId: 'principal-a', key: 'k', bodyHash: 'h', status: 202, body: '{}', createdAt: T0, expiresAt: T0 + 1_000 };
    await ledger.insertMessages([buildNewMessage()], undefined, record);
    const second = buildNewMessage();
    await expect(ledger.insertMessages([second], undefined, { ...record, createdAt: T0 + 10 })).rejects.toThrow(/taken/);
    expect(await ledger.getMessage(second.principalId, second.ref)).toBeNull();
  });

  it('sets on each row the sweep its state waits for', async () => {
    const store = new NaiveRecordStore();
    const ledger = createLedger(store);
    const scheduled = buildNewMessage({ sendAt: T0 + 500 });
    const valid = buildNewMessage({ validUntil: T0 + 900 });
    const plain = buildNewMessage({ callbackUrl: 'https://c.example/dlr' });
    await ledger.insertMessages([scheduled, valid, plain]);
    expect(await timers(store, scheduled.ref, valid.ref, plain.ref)).toEqual([['scheduled', T0 + 500], ['validity', T0 + 900], [null, null]]);
    await ledger.recordSubmission(plain.ref, 0, 'c-plain', T0 + 20);
    expect(await timers(store, plain.ref)).toEqual([['receipt', T0 + 20]]);
    // Ended with a pending report: kept, with no sweep, until the report is done.
    await ledger.applyReceipt(receipt('c-plain', DELIVERED, T0 + 30));
    expect(await timers(store, plain.ref)).toEqual([[null, null]]);
    const [report] = await ledger.claimCallbacks({ owner: 'd', limit: 1, leaseMs: LEASE, now: T0 + 40 });
    await ledger.recordCallbackAttempt(report!.uid, { result: 'delivered', statusCode: 204, error: null, nextAttemptAt: null, now: T0 + 50 });
    expect(await timers(store, plain.ref)).toEqual([['purge', T0 + 30]]);
    await ledger.promoteScheduled!(T0 + 500, 10);
    expect(await timers(store, scheduled.ref)).toEqual([[null, null]]);
  });

  it('expires a stale unleased message even when more stale leased ones come before it than the limit', async () => {
    const ledger = createLedger(new NaiveRecordStore());
    const leased = Array.from({ length: 3 }, () => buildNewMessage({ validUntil: T0 + 10 }));
    await ledger.insertMessages(leased, { owner: 'w1', until: T0 + LEASE });
    const free = buildNewMessage({ validUntil: T0 + 20 });
    await ledger.insertMessages([free]);
    const expired = await ledger.expireUnsent!(T0 + 100, 1);
    expect(expired.map((transition) => transition.message.ref)).toEqual([free.ref]);
  });

  it('two instances promoting at once move each scheduled message once', async () => {
    const store = new NaiveRecordStore();
    const one = createLedger(store);
    const two = createLedger(store);
    const messages = Array.from({ length: 10 }, () => buildNewMessage({ sendAt: T0 + 100 }));
    await one.insertMessages(messages);
    const [a, b] = await Promise.all([one.promoteScheduled!(T0 + 100, 10), two.promoteScheduled!(T0 + 100, 10)]);
    expect([...a, ...b].map((t) => t.message.ref).sort()).toEqual(messages.map((m) => m.ref).sort());
  });

  it('records a report attempt on the stored row when a late receipt moved the row on since the claim', async () => {
    const store = new NaiveRecordStore();
    const ledger = createLedger(store);
    const message = buildNewMessage({ smsCount: 2, callbackUrl: 'https://c.example/dlr' });
    await ledger.insertMessages([message]);
    await ledger.recordSubmission(message.ref, 0, 'c0', T0 + 1);
    await ledger.finish(message.ref, FAILED, T0 + 2);
    const [report] = await ledger.claimCallbacks({ owner: 'd', limit: 1, leaseMs: LEASE, now: T0 + 3 });
    // Another instance applies a late receipt: the row the claim returned is stale now.
    expect((await createLedger(store).applyReceipt(receipt('c0', DELIVERED, T0 + 4))).kind).toBe('late');
    await ledger.recordCallbackAttempt(report!.uid, { result: 'delivered', statusCode: 204, error: null, nextAttemptAt: null, now: T0 + 5 });
    const stored = await ledger.getMessage(message.principalId, message.ref);
    expect([stored?.callback?.state, stored?.callback?.attempts, stored?.parts[0]?.outcome?.state]).toEqual(['delivered', 1, 'delivered']);
  });

  it('keeps at most its limit of rows, forgetting the oldest, and only rows queued under a lease or submitted', () => {
    const rows = new KnownRows(2);
    const row = (ref: string, leased = true, state = 'queued', carrierIds: string[] = []): MessageRow =>
      ({ record: { ref, state }, queue: state === 'queued' ? 1 : null, leaseUntil: leased ? T0 : null, carrierIds }) as unknown as MessageRow;
    rows.remember(row('a', true, 'queued', ['ca']));
    rows.remember(row('b'));
    rows.remember(row('c'));
    expect([rows.get('a'), rows.byCarrierId(['ca']), rows.get('b')?.record.ref, rows.get('c')?.record.ref]).toEqual([undefined, undefined, 'b', 'c']);
    rows.remember(row('b', false));
    expect(rows.get('b')).toBeUndefined();
    // Submitted rows wait for their receipts, found by the first spelling of a carrier id only.
    rows.remember(row('d', false, 'submitted', ['c1', 'c2']));
    expect([rows.byCarrierId(['c2'])?.record.ref, rows.byCarrierId(['x', 'c1'])]).toEqual(['d', undefined]);
    rows.remember(row('d', false, 'delivered', ['c1', 'c2']));
    expect([rows.get('d'), rows.byCarrierId(['c1'])]).toEqual([undefined, undefined]);
  });

  it('applies a receipt for a part it submitted without reading the row, and reads it when another writer moved it on', async () => {
    const store = new NaiveRecordStore();
    const ledger = createLedger(store);
    const message = buildNewMessage({ smsCount: 2 });
    await ledger.insertMessages([message]);
    await ledger.recordSubmission(message.ref, 0, 'c0', T0 + 1);
    await ledger.recordSubmission(message.ref, 1, 'c1', T0 + 2);
    const lookups = vi.spyOn(store, 'findByCarrierId');
    expect((await ledger.applyReceipt(receipt('c0', DELIVERED, T0 + 3))).kind).toBe('part');
    expect(lookups).not.toHaveBeenCalled();
    // Another instance ends the message: the row known here is stale, the write loses and the ledger reads again.
    expect((await createLedger(store).applyReceipt(receipt('c1', DELIVERED, T0 + 4))).kind).toBe('terminal');
    expect((await ledger.applyReceipt(receipt('c1', DELIVERED, T0 + 5))).kind).toBe('duplicate');
    expect((await ledger.getMessage(message.principalId, message.ref))?.state).toBe('delivered');
  });
});
