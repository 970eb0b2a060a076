/**
 * MysqlRecordStore against the real MariaDB: what only a shared SQL database shows (claims
 * and guarded inserts racing on separate connections, case-sensitive keys, the schema made
 * by instances at once, the pool it owns or borrows).
 */
import { describe, expect, it } from 'vitest';
import { createLedger } from '../../src/ledger/index.js';
import { MysqlRecordStore } from '../../src/storage/mysql/adapter.js';
import { dbDescribe, freshPrefix, freshStore, MYSQL_CONFIG, pool, useMysql } from './mysql-setup.js';
import { row } from './mysql-rows.js';

useMysql();

const claim = { owner: 'w1', limit: 10, leaseMs: 30_000, now: 2000 };

dbDescribe('MysqlRecordStore', () => {
  it('creates its schema once when instances start at once, and again is a no-op', async () => {
    const tablePrefix = freshPrefix();
    const stores = Array.from({ length: 4 }, () => new MysqlRecordStore({ pool, tablePrefix }));
    await Promise.all(stores.map((store) => store.ready()));
    await new MysqlRecordStore({ pool, tablePrefix }).ready();
    const [versions] = await pool.query(`SELECT version FROM \`${tablePrefix}schema_version\``);
    expect(versions).toEqual([1, 2, 3, 4, 5, 6, 7, 101, 102].map((version) => ({ version })));
    await pool.query(`INSERT INTO \`${tablePrefix}schema_version\` (version) VALUES (99)`);
    await expect(new MysqlRecordStore({ pool, tablePrefix }).ready()).rejects.toThrow(/schema version 99, newer/);
  });

  it('stores a batch with increasing seqs at version 0, and a repeated ref stores none of it', async () => {
    const store = await freshStore();
    await store.insertMessages([row('a', { version: 7, seq: 99 }), row('b')]);
    const [a, b] = [await store.getMessage('a'), await store.getMessage('b')];
    expect(a).toMatchObject({ version: 0, record: row('a').record, book: row('a').book });
    expect(b!.seq).toBeGreaterThan(a!.seq);
    await expect(store.insertMessages([row('c'), row('a')])).rejects.toThrow();
    await expect(store.insertMessages([row('d'), row('d')])).rejects.toThrow();
    expect(await store.getMessage('c')).toBeNull();
    expect(await store.getMessage('d')).toBeNull();
  });

  it('compares keys case-sensitively: refs, external ids, carrier ids, idempotency keys', async () => {
    const store = await freshStore();
    await store.insertMessages([row('abc', { carrierIds: ['X1'] }, { externalId: 'E' }), row('ABC', { carrierIds: ['x1'] }, { externalId: 'e' })]);
    expect((await store.getMessage('ABC'))!.record.ref).toBe('ABC');
    expect((await store.findByExternalId('p1', 'e', 10)).map((r) => r.record.ref)).toEqual(['ABC']);
    expect((await store.findByCarrierId(['x1']))!.record.ref).toBe('ABC');
    const key = { principalId: 'p1', bodyHash: 'h', status: 200, body: '{}', createdAt: 1000, expiresAt: 5000 };
    expect(await store.insertMessages([row('k1')], { idempotency: { ...key, key: 'key' } })).toBeUndefined();
    expect(await store.insertMessages([row('k2')], { idempotency: { ...key, key: 'KEY' } })).toBeUndefined();
    expect(await store.findIdempotency('p1', 'KEY', 2000)).toEqual({ ...key, key: 'KEY' });
  });

  it('compares inbound keys case-sensitively: opt-out short codes and numbers, part keys, redelivery keys', async () => {
    const store = createLedger(await freshStore());
    expect(await store.setOptOut!({ shortCode: 'SHOP', number: 'a1' }, true, 1000)).toBe(true);
    expect(await store.setOptOut!({ shortCode: 'shop', number: 'a1' }, true, 1000)).toBe(true);
    expect(await store.setOptOut!({ shortCode: 'shop', number: 'A1' }, true, 1000)).toBe(true);
    expect(await store.findOptOuts!([{ shortCode: 'Shop', number: 'a1' }, { shortCode: 'shop', number: 'A1' }])).toEqual([false, true]);
    expect((await store.listOptOuts!({ shortCode: 'shop', limit: 10 })).map((entry) => entry.number)).toEqual(['A1', 'a1']);
    const part = { seq: 1, total: 2, text: 'one. ', receivedAt: 1000 };
    await store.storeInboundPart!({ ...part, key: 'Msg' });
    expect(await store.storeInboundPart!({ ...part, key: 'msg', seq: 2 })).toEqual([{ ...part, key: 'msg', seq: 2 }]);
    const inbound = { principalId: null, profileCode: null, from: '254700000001', to: 'shop', text: 'STOP', receivedAt: 1000, callbackUrl: null, callbackSecret: null, uid: null };
    await store.insertInbound!({ ...inbound, ref: 'r1' }, { once: { key: 'Once', since: 0 } });
    expect(await store.insertInbound!({ ...inbound, ref: 'r2' }, { once: { key: 'once', since: 0 } })).toEqual({ optOutChanged: false });
    expect(await store.insertInbound!({ ...inbound, ref: 'r3' }, { once: { key: 'once', since: 0 } })).toEqual({ optOutChanged: false, duplicate: true });
  });

  it('adds the inbound tables to tables an earlier version made without them', async () => {
    const tablePrefix = freshPrefix();
    await new MysqlRecordStore({ pool, tablePrefix }).ready();
    await pool.query(`DROP TABLE \`${tablePrefix}inbound\`, \`${tablePrefix}opt_outs\`, \`${tablePrefix}inbound_parts\``);
    await pool.query(`DELETE FROM \`${tablePrefix}schema_version\` WHERE version IN (101, 102)`);
    const store = createLedger(new MysqlRecordStore({ pool, tablePrefix }));
    await store.ready!();
    expect(await store.setOptOut!({ shortCode: '22021', number: '254700000001' }, true, 1000)).toBe(true);
    expect(await store.listInbound!({ limit: 10 })).toEqual([]);
  });

  it('gives concurrent claims disjoint sets that together take every free row, behind many leased ones', async () => {
    const store = await freshStore();
    // Many rows leased in the queue: a claim that sorted every candidate (the plan a database
    // may prefer then) would lock them all, and the other claims would skip them.
    await store.insertMessages(Array.from({ length: 1300 }, (_, i) => row(`l${i}`, { orderKey: i % 50, leaseOwner: 'x', leaseUntil: 1e12 })));
    for (let round = 0; round < 5; round++) {
      const now = 2000 + round;
      await store.insertMessages(Array.from({ length: 30 }, (_, i) => row(`m${round}-${i}`, { orderKey: i, dueAt: now })));
      const claims = await Promise.all(['a', 'b', 'c'].map((owner) => store.claimMessages({ ...claim, owner, limit: 12, now })));
      // Claims scanning at once may share the rows differently, but take all 30 between them.
      expect(claims.every((taken) => taken.length <= 12)).toBe(true);
      expect(new Set(claims.flat().map((r) => r.record.ref)).size).toBe(30);
      expect(claims.flat().every((r) => r.version === 1 && r.leaseUntil === now + 30_000)).toBe(true);
    }
    expect(await store.claimMessages(claim)).toEqual([]);
    expect(await store.getMessage('m0-0')).toMatchObject({ version: 1, leaseOwner: expect.any(String) });
  });

  it('claims in (queue, orderKey, seq) order, skipping rows not due, leased or expired', async () => {
    const store = await freshStore();
    await store.insertMessages([
      row('late', { orderKey: 1, dueAt: 5000 }),
      row('leased', { orderKey: 1, leaseOwner: 'x', leaseUntil: 9000 }),
      row('expired', { orderKey: 1 }, { validUntil: 2000 }),
      row('bulk', { orderKey: 0 }),
      row('urgent', { queue: 0, orderKey: 50 }),
      row('second', { orderKey: 0 }),
      row('ended', { queue: null }),
    ]);
    expect((await store.claimMessages(claim)).map((r) => r.record.ref)).toEqual(['urgent', 'bulk', 'second']);
    expect(await store.queueEnds(1, 'p1', 2000)).toEqual({ principalLast: 1, head: 1 });
  });

  it('claims due reports earliest first, moving reportDueAt as their lease', async () => {
    const store = await freshStore();
    await store.insertMessages([row('r1', { reportDueAt: 1500 }), row('r2', { reportDueAt: 1200 }), row('r3', { reportDueAt: 9000 })]);
    const claimed = await Promise.all([store.claimReports({ ...claim, limit: 1 }), store.claimReports({ ...claim, limit: 1 })]);
    expect(claimed.flat().map((r) => r.record.ref).sort()).toEqual(['r1', 'r2']);
    expect((await store.getMessage('r2'))!.reportDueAt).toBe(32_000);
    expect(await store.claimReports(claim)).toEqual([]);
  });

  it('writes a row only at the version read, with its refund and new carrier ids in the same step', async () => {
    const store = await freshStore();
    await store.insertMessages([row('w')]);
    const next = row('w', { version: 1, queue: null, carrierIds: ['C-1'] }, { state: 'submitted' });
    const [applied, other] = await store.writeMessages([
      { row: next, expectedVersion: 0, refund: 3 },
      { row: row('w', { version: 1 }), expectedVersion: 0, refund: 5 },
    ]);
    expect(applied).not.toBe(other);
    const stored = (await store.getMessage('w'))!;
    expect(stored.version).toBe(1);
    expect(await store.creditBalance('p1')).toBe(applied ? 3 : 5);
    expect((await store.findByCarrierId(['nope', 'C-1']))?.record.ref ?? null).toBe(applied ? 'w' : null);
    expect(await store.writeMessages([{ row: next, expectedVersion: 0, refund: 3 }])).toEqual([false]);
  });

  it('finds a reused carrier id on the newest row, and forgets a deleted row’s ids', async () => {
    const store = await freshStore();
    await store.insertMessages([row('old', { carrierIds: ['C'] })]);
    await store.insertMessages([row('new', { carrierIds: ['C', 'D'] })]);
    expect((await store.findByCarrierId(['C']))!.record.ref).toBe('new');
    expect(await store.deleteMessages(['new', 'missing'])).toBe(1);
    expect((await store.findByCarrierId(['D', 'C']))!.record.ref).toBe('old');
    expect(await store.findByCarrierId(['D'])).toBeNull();
  });

  it('stores one of two concurrent inserts under one idempotency key; an expired key is free again', async () => {
    const store = await freshStore();
    const key = (createdAt: number) => ({ principalId: 'p1', key: 'K', bodyHash: 'h', status: 200, body: `${createdAt}`, createdAt, expiresAt: createdAt + 1000 });
    const results = await Promise.all(
      Array.from({ length: 5 }, (_, i) => store.insertMessages([row(`i${i}`)], { idempotency: key(1000) })),
    );
    expect(results.filter((r) => r === undefined)).toHaveLength(1);
    expect(results.filter((r) => r?.refused === 'key-taken')).toHaveLength(4);
    const stored = await Promise.all(Array.from({ length: 5 }, (_, i) => store.getMessage(`i${i}`)));
    expect(stored.filter((r) => r !== null)).toHaveLength(1);
    expect(await store.insertMessages([row('later')], { idempotency: key(2000) })).toBeUndefined();
    expect((await store.findIdempotency('p1', 'K', 2500))!.body).toBe('2000');
    expect(await store.findIdempotency('p1', 'K', 3000)).toBeNull();
  });

  it('takes credit with a floor: concurrent charges never overspend, and a refusal stores nothing', async () => {
    const store = await freshStore();
    expect(await store.addCredit('p1', 10)).toBe(10);
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) => store.insertMessages([row(`c${i}`)], { credit: { principalId: 'p1', units: 3 } })),
    );
    expect(results.filter((r) => r === undefined)).toHaveLength(3);
    expect(results.filter((r) => r !== undefined)).toEqual(Array(3).fill({ refused: 'insufficient-credit', balance: 1 }));
    expect(await store.creditBalance('p1')).toBe(1);
    const refused = await store.insertMessages([row('x')], {
      idempotency: { principalId: 'p1', key: 'X', bodyHash: 'h', status: 200, body: '', createdAt: 1000, expiresAt: 9000 },
      credit: { principalId: 'p1', units: 2 },
    });
    expect(refused).toEqual({ refused: 'insufficient-credit', balance: 1 });
    expect(await store.getMessage('x')).toBeNull();
    expect(await store.findIdempotency('p1', 'X', 2000)).toBeNull();
    expect(await store.creditBalance('nobody')).toBe(0);
  });

  it('finds due timers, counts the queue and purges expired keys oldest first', async () => {
    const store = await freshStore();
    await store.insertMessages([
      row('s1', { queue: null, timer: 'scheduled', timerAt: 3000 }),
      row('s2', { queue: null, timer: 'scheduled', timerAt: 2000 }),
      row('q0', { queue: 0 }, { createdAt: 700 }),
      row('q1', { queue: 1 }, { principalId: 'p2', sendAt: 500 }),
    ]);
    expect((await store.dueMessages('scheduled', 3000, 10)).map((r) => r.record.ref)).toEqual(['s2', 's1']);
    expect(await store.countQueued()).toEqual({ transactional: 1, bulk: 1, oldestAcceptedAt: 500 });
    expect(await store.countQueued('p1')).toEqual({ transactional: 1, bulk: 0, oldestAcceptedAt: 700 });
    for (const [k, expiresAt] of [['a', 300], ['b', 100], ['c', 200], ['d', 9000]] as const) {
      await store.insertMessages([], { idempotency: { principalId: 'p1', key: k, bodyHash: 'h', status: 200, body: '', createdAt: 0, expiresAt } });
    }
    expect(await store.purgeIdempotency(1000, 2)).toBe(2);
    expect(await store.findIdempotency('p1', 'a', 0)).not.toBeNull();
    expect(await store.purgeIdempotency(1000, 10)).toBe(1);
  });

  it('ends the pool it made itself, and leaves the host’s pool open', async () => {
    const own = new MysqlRecordStore({ uri: `mysql://${MYSQL_CONFIG.user}@${MYSQL_CONFIG.host}:${MYSQL_CONFIG.port}/${MYSQL_CONFIG.database}`, tablePrefix: freshPrefix() });
    await own.ready();
    await own.close();
    await expect(own.getMessage('a')).rejects.toThrow();
    const borrowed = await freshStore();
    await borrowed.close();
    expect(await borrowed.getMessage('a')).toBeNull();
  });
});

describe('MysqlRecordStore options', () => {
  it('refuses a missing or doubled source, a bad prefix and unknown options, naming the option', () => {
    expect(() => new MysqlRecordStore({})).toThrow(/exactly one of `pool`, `uri` and `connection`/);
    expect(() => new MysqlRecordStore({ pool, uri: 'mysql://x' })).toThrow(/got pool and uri/);
    expect(() => new MysqlRecordStore({ pool, tablePrefix: 'a-b' })).toThrow(/tablePrefix/);
    expect(() => new MysqlRecordStore({ uri: 'postgres://x' })).toThrow(/`uri`/);
    expect(() => new MysqlRecordStore({ pool: {} as never })).toThrow(/mysql2\/promise pool/);
    expect(() => new MysqlRecordStore({ pool, tablePrfix: 'x' } as never)).toThrow(/tablePrefix/);
  });
});
