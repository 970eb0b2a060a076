import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { MemoryRecordStore } from '../../src/storage/memory/index.js';
import { buildNewMessage } from '../../src/testing/storage-suite/index.js';
import type { MessageRecord } from '../../src/storage/message-record.js';
import type { IdempotencyRecord } from '../../src/storage/idempotency-record.js';
import type { MessageRow, RecordStore, Timer } from '../../src/storage/record-store.js';
import { mulberry32 } from '../../src/util/mulberry32.js';
import { NaiveRecordStore } from '../helpers/naive-record-store.js';

/** A row's fields, with the record's given apart. */
type RowFields = Partial<Omit<MessageRow, 'record'>> & { record?: Partial<MessageRecord> };

/** A queued, claimable row at time 0 (bulk, `orderKey` 0), with `fields` over it. */
function row({ record, ...fields }: RowFields = {}): MessageRow {
  const { weight: _weight, ...message } = buildNewMessage({ createdAt: 0 });
  return {
    record: { ...message, state: 'queued', statusReason: null, statusDescription: null, attempts: 0, lastError: null, updatedAt: 0, parts: [], callback: null, ...record },
    book: { weight: 1, charge: null, replacedCarrierIds: [], reportUid: null },
    version: 0,
    seq: 0,
    queue: 1,
    orderKey: 0,
    dueAt: 0,
    leaseOwner: null,
    leaseUntil: null,
    reportDueAt: null,
    timer: null,
    timerAt: null,
    carrierIds: [],
    ...fields,
  };
}

/** An idempotency record of principal `p` under `key`, made at `createdAt`, live until `expiresAt`. */
function idempotency(key: string, createdAt: number, expiresAt: number): IdempotencyRecord {
  return { principalId: 'p', key, bodyHash: 'h', status: 202, body: '{}', createdAt, expiresAt };
}

const claim = (store: RecordStore, now: number, limit = 100, owner = 'w1', leaseMs = 10) => store.claimMessages({ owner, limit, leaseMs, now });
const refsOf = (rows: readonly MessageRow[]) => rows.map((stored) => stored.record.ref);

/** Writes `changes` over the stored row of `ref` at its current version; returns whether it was applied. */
async function change(store: RecordStore, ref: string, changes: Partial<MessageRow>, refund?: number): Promise<boolean> {
  const stored = (await store.getMessage(ref))!;
  const [applied] = await store.writeMessages([{ row: { ...stored, ...changes, version: stored.version + 1 }, expectedVersion: stored.version, refund }]);
  return applied!;
}

describe('MemoryRecordStore', () => {
  it('claims by (queue, orderKey, seq), the transactional class first, and only min(limit, claimable)', async () => {
    const store = new MemoryRecordStore();
    const rows = [
      row({ queue: 1, orderKey: 1 }),
      row({ queue: 1, orderKey: 0 }),
      row({ queue: 0, orderKey: 5 }),
      row({ queue: 1, orderKey: 0 }),
      row({ queue: null, orderKey: -1 }),
    ];
    await store.insertMessages(rows);
    expect(refsOf(await claim(store, 0, 2))).toEqual([rows[2]!.record.ref, rows[1]!.record.ref]);
    expect(refsOf(await claim(store, 0, 10))).toEqual([rows[3]!.record.ref, rows[0]!.record.ref]);
    expect(await claim(store, 0, 10)).toEqual([]);
  });

  it('claims a row only when due, unleased and still valid, and again once its lease ends', async () => {
    const store = new MemoryRecordStore();
    const notDue = row({ dueAt: 50 });
    const leased = row({ leaseOwner: 'other', leaseUntil: 30 });
    const lapsing = row({ record: { validUntil: 20 } });
    await store.insertMessages([notDue, leased, lapsing]);
    expect(refsOf(await claim(store, 10, 100, 'w1', 15))).toEqual([lapsing.record.ref]);
    expect(await claim(store, 20)).toEqual([]);
    expect(refsOf(await claim(store, 30, 100, 'w1', 100))).toEqual([leased.record.ref]);
    expect(refsOf(await claim(store, 50))).toEqual([notDue.record.ref]);
  });

  it('stores and returns a new row for a claim, version one higher and leased, leaving the row read before as it was', async () => {
    const store = new MemoryRecordStore();
    const given = row();
    await store.insertMessages([given]);
    const before = (await store.getMessage(given.record.ref))!;
    const [claimed] = await claim(store, 5, 1, 'w1', 10);
    expect(claimed).toMatchObject({ version: 1, leaseOwner: 'w1', leaseUntil: 15 });
    expect(before).toMatchObject({ version: 0, leaseOwner: null, leaseUntil: null });
    expect(given.version).toBe(0);
    expect(await store.getMessage(given.record.ref)).toEqual(claimed);
  });

  it('gives two claims at once disjoint sets', async () => {
    const store = new MemoryRecordStore();
    await store.insertMessages(Array.from({ length: 10 }, (_, i) => row({ orderKey: i })));
    const [one, two] = await Promise.all([claim(store, 0, 6, 'a'), claim(store, 0, 6, 'b')]);
    expect(one).toHaveLength(6);
    expect(two).toHaveLength(4);
    expect(new Set([...refsOf(one), ...refsOf(two)]).size).toBe(10);
  });

  it('applies a write only at the stored version, with its refund, and refuses a stale one', async () => {
    const store = new MemoryRecordStore();
    const given = row();
    await store.insertMessages([given]);
    const read = (await store.getMessage(given.record.ref))!;
    const ended = { ...read, queue: null, version: 1 };
    expect(await store.writeMessages([{ row: ended, expectedVersion: 0, refund: 2 }, { row: { ...read, orderKey: 9, version: 1 }, expectedVersion: 0, refund: 5 }])).toEqual([true, false]);
    expect(await store.getMessage(given.record.ref)).toEqual(ended);
    expect(await store.creditBalance(given.record.principalId)).toBe(2);
    expect(await claim(store, 0)).toEqual([]);
    expect(await store.writeMessages([{ row: row(), expectedVersion: 0 }])).toEqual([false]);
  });

  it('stores nothing when an idempotency key is live, and takes an expired one', async () => {
    const store = new MemoryRecordStore();
    await store.addCredit('p', 10);
    expect(await store.insertMessages([row()], { idempotency: idempotency('k', 0, 100) })).toBeUndefined();
    const refused = row();
    expect(await store.insertMessages([refused], { idempotency: idempotency('k', 99, 200), credit: { principalId: 'p', units: 1 } })).toEqual({ refused: 'key-taken' });
    expect(await store.getMessage(refused.record.ref)).toBeNull();
    expect(await store.creditBalance('p')).toBe(10);
    expect(await store.insertMessages([refused], { idempotency: idempotency('k', 100, 200) })).toBeUndefined();
    expect(store.findIdempotency('p', 'k', 150)).toEqual(idempotency('k', 100, 200));
    expect(store.findIdempotency('p', 'k', 200)).toBeNull();
  });

  it('stores nothing when the credit would go below zero, and says the balance it saw', async () => {
    const store = new MemoryRecordStore();
    await store.addCredit('p', 3);
    const rows = [row(), row()];
    expect(await store.insertMessages(rows, { credit: { principalId: 'p', units: 4 }, idempotency: idempotency('k', 0, 100) })).toEqual({ refused: 'insufficient-credit', balance: 3 });
    expect(await store.getMessage(rows[0]!.record.ref)).toBeNull();
    expect(store.findIdempotency('p', 'k', 0)).toBeNull();
    expect(await store.insertMessages(rows, { credit: { principalId: 'p', units: 3 } })).toBeUndefined();
    expect(await store.creditBalance('p')).toBe(0);
  });

  it('refuses a batch with a ref already stored or repeated, storing none of it', async () => {
    const store = new MemoryRecordStore();
    const stored = row();
    await store.insertMessages([stored]);
    const fresh = row();
    await expect(store.insertMessages([fresh, row({ record: { ref: stored.record.ref } })])).rejects.toThrow();
    await expect(store.insertMessages([fresh, fresh])).rejects.toThrow();
    expect(await store.getMessage(fresh.record.ref)).toBeNull();
  });

  it('finds a row by any carrier id it was given, also those a write adds, and by none once deleted', async () => {
    const store = new MemoryRecordStore();
    const given = row({ carrierIds: ['c1'] });
    await store.insertMessages([given]);
    expect(await change(store, given.record.ref, { carrierIds: ['c1', 'c2'] })).toBe(true);
    expect((await store.findByCarrierId(['unknown', 'c2']))?.record.ref).toBe(given.record.ref);
    expect((await store.findByCarrierId(['c1']))?.record.ref).toBe(given.record.ref);
    expect(await store.deleteMessages([given.record.ref, given.record.ref, 'unknown'])).toBe(1);
    expect(await store.findByCarrierId(['c1', 'c2'])).toBeNull();
    expect(await store.getMessage(given.record.ref)).toBeNull();
  });

  it('finds the rows of an external id newest first, per principal', async () => {
    const store = new MemoryRecordStore();
    const old = row({ record: { externalId: 'x', createdAt: 1 } });
    const newer = row({ record: { externalId: 'x', createdAt: 2 } });
    const sameTime = row({ record: { externalId: 'x', createdAt: 2 } });
    await store.insertMessages([old, newer, sameTime, row({ record: { externalId: 'x', principalId: 'other' } })]);
    expect(refsOf(await store.findByExternalId(old.record.principalId, 'x', 10))).toEqual(refsOf([sameTime, newer, old]));
    expect(refsOf(await store.findByExternalId(old.record.principalId, 'x', 1))).toEqual(refsOf([sameTime]));
    await store.deleteMessages([sameTime.record.ref, newer.record.ref]);
    expect(refsOf(await store.findByExternalId(old.record.principalId, 'x', 10))).toEqual(refsOf([old]));
  });

  it('finds the rows due for each timer, earliest first, without taking them', async () => {
    const store = new MemoryRecordStore();
    const late = row({ timer: 'purge', timerAt: 20 });
    const early = row({ timer: 'purge', timerAt: 10 });
    const receipt = row({ timer: 'receipt', timerAt: 5 });
    await store.insertMessages([late, early, receipt]);
    expect(refsOf(await store.dueMessages('purge', 20, 10))).toEqual(refsOf([early, late]));
    expect(refsOf(await store.dueMessages('purge', 15, 10))).toEqual(refsOf([early]));
    expect(refsOf(await store.dueMessages('receipt', 100, 10))).toEqual(refsOf([receipt]));
    await change(store, early.record.ref, { timer: 'receipt', timerAt: 1 });
    expect(refsOf(await store.dueMessages('purge', 100, 10))).toEqual(refsOf([late]));
    expect(refsOf(await store.dueMessages('receipt', 100, 1))).toEqual(refsOf([early]));
  });

  it('claims due reports earliest first, each claim moving reportDueAt on as its lease', async () => {
    const store = new MemoryRecordStore();
    const second = row({ queue: null, reportDueAt: 10 });
    const first = row({ queue: null, reportDueAt: 5 });
    await store.insertMessages([second, first, row({ queue: null, reportDueAt: 50 })]);
    const claimed = await store.claimReports({ owner: 'w', limit: 10, leaseMs: 0, now: 10 });
    expect(refsOf(claimed)).toEqual(refsOf([first, second]));
    expect(claimed.map((stored) => [stored.reportDueAt, stored.version])).toEqual([[10, 1], [10, 1]]);
    expect(await store.claimReports({ owner: 'w', limit: 10, leaseMs: 30, now: 12 })).toHaveLength(2);
    expect(await store.claimReports({ owner: 'w', limit: 10, leaseMs: 30, now: 20 })).toEqual([]);
  });

  it('gives the queue ends: the principal\'s greatest orderKey, and the head a claim could take, else the greatest', async () => {
    const store = new MemoryRecordStore();
    expect(await store.queueEnds(1, 'a', 0)).toEqual({ principalLast: null, head: null });
    const a1 = row({ orderKey: 3, record: { principalId: 'a' } });
    const a2 = row({ orderKey: 7, record: { principalId: 'a' } });
    const b1 = row({ orderKey: 5, record: { principalId: 'b' } });
    await store.insertMessages([a1, a2, b1]);
    expect(await store.queueEnds(1, 'a', 0)).toEqual({ principalLast: 7, head: 3 });
    expect(await store.queueEnds(0, 'a', 0)).toEqual({ principalLast: null, head: null });
    await claim(store, 0, 1);
    expect(await store.queueEnds(1, 'b', 0)).toEqual({ principalLast: 5, head: 5 });
    await claim(store, 0, 2);
    expect(await store.queueEnds(1, 'b', 0)).toEqual({ principalLast: 5, head: 7 });
    await change(store, a2.record.ref, { queue: null });
    expect(await store.queueEnds(1, 'a', 0)).toEqual({ principalLast: 3, head: 5 });
  });

  it('counts the queued rows by class, everyone\'s or one principal\'s, with the oldest acceptance', async () => {
    const store = new MemoryRecordStore();
    const a = row({ queue: 0, record: { principalId: 'a', createdAt: 7 } });
    const b = row({ queue: 1, record: { principalId: 'b', createdAt: 9, sendAt: 4 } });
    await store.insertMessages([a, b, row({ queue: 1, record: { principalId: 'b', createdAt: 6 } }), row({ queue: null, record: { createdAt: 1 } })]);
    expect(await store.countQueued()).toEqual({ transactional: 1, bulk: 2, oldestAcceptedAt: 4 });
    expect(await store.countQueued('a')).toEqual({ transactional: 1, bulk: 0, oldestAcceptedAt: 7 });
    await change(store, b.record.ref, { queue: null });
    expect(await store.countQueued('b')).toEqual({ transactional: 0, bulk: 1, oldestAcceptedAt: 6 });
    await store.deleteMessages([a.record.ref]);
    expect(await store.countQueued()).toEqual({ transactional: 0, bulk: 1, oldestAcceptedAt: 6 });
    expect(await store.countQueued('nobody')).toEqual({ transactional: 0, bulk: 0, oldestAcceptedAt: null });
  });

  it('purges expired idempotency records, oldest expiry first', async () => {
    const store = new MemoryRecordStore();
    for (const [key, expiresAt] of [['a', 30], ['b', 10], ['c', 20]] as const) await store.insertMessages([row()], { idempotency: idempotency(key, 0, expiresAt) });
    expect(await store.purgeIdempotency(25, 1)).toBe(1);
    expect(store.findIdempotency('p', 'b', 0)).toBeNull();
    expect(store.findIdempotency('p', 'c', 0)).not.toBeNull();
    expect(await store.purgeIdempotency(25, 10)).toBe(1);
    expect(store.findIdempotency('p', 'a', 0)).not.toBeNull();
  });

  it('answers as the naive store does under random inserts, claims, writes and deletes, whatever order the clocks go in', async () => {
    const time = fc.integer({ min: 0, max: 120 });
    const maybeTime = fc.option(time, { nil: null });
    const principal = fc.constantFrom<string>('p', 'q', 'r');
    const fields = fc.record({
      principalId: principal,
      externalId: fc.constantFrom('x', 'y'),
      createdAt: time,
      sendAt: maybeTime,
      validUntil: maybeTime,
      queue: fc.constantFrom(0, 1, null),
      orderKey: fc.integer({ min: 0, max: 20 }),
      dueAt: time,
      leaseUntil: maybeTime,
      reportDueAt: maybeTime,
      timer: fc.constantFrom<Timer | null>('scheduled', 'validity', 'receipt', 'purge', null),
      timerAt: maybeTime,
      carrierIds: fc.subarray(['c1', 'c2', 'c3', 'c4']),
    });
    type Fields = typeof fields extends fc.Arbitrary<infer T> ? T : never;
    const toRow = (ref: string, f: Fields, base?: MessageRow): MessageRow => {
      const from = base ?? row();
      return {
        ...from,
        record: { ...from.record, ref, principalId: f.principalId, externalId: f.externalId, createdAt: f.createdAt, sendAt: f.sendAt, validUntil: f.validUntil },
        queue: f.queue,
        orderKey: f.orderKey,
        dueAt: f.dueAt,
        leaseOwner: f.leaseUntil === null ? null : 'x',
        leaseUntil: f.leaseUntil,
        reportDueAt: f.reportDueAt,
        timer: f.timer,
        timerAt: f.timerAt,
        // A carrier id names one part of one message: no two rows share one.
        carrierIds: f.carrierIds.map((id) => `${ref}:${id}`),
      };
    };
    const operation = fc.oneof(
      fc.record({
        kind: fc.constant('insert' as const),
        rows: fc.array(fields, { minLength: 1, maxLength: 3 }),
        repeat: fc.option(fc.nat(), { nil: null }),
        key: fc.option(fc.record({ key: fc.constantFrom('k1', 'k2'), createdAt: time, life: fc.integer({ min: 1, max: 60 }) }), { nil: null }),
        units: fc.option(fc.integer({ min: 0, max: 4 }), { nil: null }),
      }),
      fc.record({ kind: fc.constant('claim' as const), now: time, limit: fc.integer({ min: 0, max: 5 }), leaseMs: fc.integer({ min: 0, max: 30 }) }),
      fc.record({ kind: fc.constant('claimReports' as const), now: time, limit: fc.integer({ min: 0, max: 5 }), leaseMs: fc.integer({ min: 0, max: 30 }) }),
      fc.record({ kind: fc.constant('write' as const), pick: fc.nat(), stale: fc.boolean(), fields, refund: fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined }) }),
      fc.record({ kind: fc.constant('delete' as const), picks: fc.array(fc.nat(), { maxLength: 3 }) }),
      fc.record({ kind: fc.constant('read' as const), now: time, principal, timer: fc.constantFrom<Timer>('scheduled', 'validity', 'receipt', 'purge'), limit: fc.integer({ min: 0, max: 4 }), carrierIds: fc.array(fc.tuple(fc.nat(), fc.constantFrom('c1', 'c2', 'c3', 'c4')), { maxLength: 3 }) }),
      fc.record({ kind: fc.constant('credit' as const), principal, units: fc.integer({ min: 0, max: 3 }) }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(operation, { maxLength: 60 }), async (operations) => {
        const model = new NaiveRecordStore();
        const store = new MemoryRecordStore();
        const refs: string[] = [];
        let next = 0;
        const both = async <T>(call: (s: RecordStore) => Promise<T> | T): Promise<T> => {
          const [expected, actual] = await Promise.all([Promise.resolve().then(() => call(model)), Promise.resolve().then(() => call(store))].map((p) => p.then((value) => ({ value }), () => ({ error: true }))));
          expect('error' in actual!).toBe('error' in expected!);
          if ('value' in expected!) expect((actual as { value: T }).value).toEqual(expected.value);
          return 'value' in expected! ? expected.value : (undefined as T);
        };
        for (const op of operations) {
          switch (op.kind) {
            case 'insert': {
              const rows = op.rows.map((f) => toRow(`m${next++}`, f));
              if (op.repeat !== null && refs.length > 0) rows.push(toRow(refs[op.repeat % refs.length]!, op.rows[0]!));
              const guard = {
                ...(op.key === null ? {} : { idempotency: { ...idempotency(op.key.key, op.key.createdAt, op.key.createdAt + op.key.life) } }),
                ...(op.units === null ? {} : { credit: { principalId: 'p', units: op.units } }),
              };
              const refusal = await both((s) => s.insertMessages(rows, guard));
              if (refusal === undefined && rows.every((r) => !refs.includes(r.record.ref))) refs.push(...rows.map((r) => r.record.ref));
              break;
            }
            case 'claim':
              await both((s) => s.claimMessages({ owner: 'w', limit: op.limit, leaseMs: op.leaseMs, now: op.now }));
              break;
            case 'claimReports':
              await both((s) => s.claimReports({ owner: 'w', limit: op.limit, leaseMs: op.leaseMs, now: op.now }));
              break;
            case 'write': {
              if (refs.length === 0) break;
              const stored = await model.getMessage(refs[op.pick % refs.length]!);
              if (stored === null) break;
              const version = stored.version - (op.stale ? 1 : 0);
              const written = { ...toRow(stored.record.ref, { ...op.fields, principalId: stored.record.principalId }, stored), version: version + 1 };
              await both((s) => s.writeMessages([{ row: written, expectedVersion: version, refund: op.refund }]));
              break;
            }
            case 'delete':
              await both((s) => s.deleteMessages(op.picks.map((pick) => refs[pick % Math.max(1, refs.length)] ?? 'none')));
              break;
            case 'read':
              for (const queue of [0, 1]) await both((s) => s.queueEnds(queue, op.principal, op.now));
              await both((s) => s.countQueued!());
              await both((s) => s.countQueued!(op.principal));
              await both((s) => s.dueMessages(op.timer, op.now, op.limit));
              await both((s) => s.findByCarrierId(op.carrierIds.map(([pick, id]) => `${refs[pick % Math.max(1, refs.length)] ?? 'none'}:${id}`)));
              await both((s) => s.findByExternalId(op.principal, 'x', op.limit));
              await both((s) => s.findIdempotency('p', 'k1', op.now));
              await both((s) => s.purgeIdempotency(op.now, op.limit));
              for (const ref of refs) await both((s) => s.getMessage(ref));
              break;
            case 'credit':
              await both((s) => s.addCredit(op.principal, op.units));
              await both((s) => s.creditBalance(op.principal));
              break;
          }
        }
      }),
      { numRuns: 300 },
    );
  });

  it('claims a backlog of 100,000 rows over 2,000 principals in order, a few at a time, as they come due', async () => {
    const store = new MemoryRecordStore();
    const count = 100_000;
    const base = row();
    const random = mulberry32(7);
    const rows = Array.from({ length: count }, (_, i): MessageRow => ({
      ...base,
      record: { ...base.record, ref: `m${i}`, principalId: `p${i % 2_000}` },
      queue: i % 7 === 0 ? 0 : 1,
      orderKey: Math.floor(random() * 1_000),
      dueAt: i % 10 === 0 ? 50 : 0,
    }));
    for (let i = 0; i < count; i += 1_000) await store.insertMessages(rows.slice(i, i + 1_000));
    const inOrder = (now: number) =>
      rows
        .map((r, seq) => ({ r, seq }))
        .filter(({ r }) => r.dueAt === now)
        .sort((a, b) => a.r.queue! - b.r.queue! || a.r.orderKey - b.r.orderKey || a.seq - b.seq)
        .map(({ r }) => r.record.ref);
    for (const now of [0, 50]) {
      const claimed: string[] = [];
      for (let batch = await claim(store, now, 50, 'w', 1_000); batch.length > 0; batch = await claim(store, now, 50, 'w', 1_000)) claimed.push(...refsOf(batch));
      expect(claimed).toEqual(inOrder(now));
    }
    expect(await store.countQueued()).toEqual({ transactional: Math.ceil(count / 7), bulk: count - Math.ceil(count / 7), oldestAcceptedAt: 0 });
  });
});
