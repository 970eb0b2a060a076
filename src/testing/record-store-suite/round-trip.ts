/**
 * The record-store contract suite's tests of one topic: a row comes back as it was given,
 * every field of its record and book included (unicode text, fractional order keys, nested
 * parts and report state), by every read; and what the caller holds is its own: changing a
 * row it inserted, wrote or got back changes nothing stored. Kept as a topic of its own
 * because a store that keeps a field it does not index in the wrong type or precision, or
 * shares its objects with the caller, passes every rule about keys and orders and still
 * loses a customer's data.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { outcome } from '../../lifecycle/states.js';
import type { MessageRow } from '../../storage/record-store.js';
import type { RecordSuiteContext } from './context.js';
import { buildMessageRow, copyOf, LEASE, T0 } from './fixtures.js';

const AS_GIVEN = '(rule: a row comes back as it was given, every field of its record and its book, with the seq the store gave it and its version)';
const OWNED = '(rule: rows handed to a store or returned by it belong to the caller: a store copies what it keeps, or declares sharesRows when it keeps the objects and the caller promises never to change them)';
const UNCHANGED = '(rule: a store never changes a row object it was given or handed out: it stores a new one, or a copy)';
const SHARED = 'the store shares its rows with the caller (sharesRows), which never changes them';

/** A row with every field set to something other than the builder's default. */
function fullRow(): MessageRow {
  return buildMessageRow({
    record: {
      principalId: 'principal-ü',
      endpoint: 'premium',
      profileCode: 'PROFILE-Ω',
      sender: 'Shöp',
      recipient: '447700900123',
      recipientAsSent: '+44 7700 900123',
      country: 'GB',
      numberType: 'mobile',
      reportFormat: 'flat',
      reportPer: 'part',
      text: 'Habari 👋🏽 — ñandú, 中文, مرحبا, e\u0301, "quotes" \'and\' \\ back\nslash',
      messageType: 2,
      reqType: 3,
      externalId: 'zamówienie-№7',
      recipientField: 'mobile_number',
      referenceField: 'message_id',
      smsCount: 3,
      encoding: 'UCS-2',
      callbackUrl: 'https://example.com/dlr?x=1&y=ü',
      callbackSecret: 's3cr3t-✓',
      createdAt: T0 + 1,
      priority: 'transactional',
      sendAt: T0 + 60_000,
      validUntil: T0 + 3_600_000,
      state: 'submitted',
      statusReason: 'absent_subscriber',
      statusDescription: 'Subscriber absent — try later',
      attempts: 2,
      lastError: 'carrier said: "busy" ✗',
      updatedAt: T0 + 123_456,
      parts: [
        { index: 0, carrierId: 'c-0', outcome: outcome('delivered', 'delivered_to_terminal'), submittedAt: T0 + 100, endedAt: T0 + 2_000 },
        { index: 1, carrierId: 'c-1', outcome: null, submittedAt: T0 + 200, endedAt: null },
        { index: 2, carrierId: null, outcome: outcome('undelivered', 'absent_subscriber', 'Absent — ✗') },
      ],
      callback: { state: 'pending', attempts: 3, lastStatusCode: 503, lastError: 'Service Unavailable', nextAttemptAt: T0 + 90_000 },
    },
    book: {
      weight: 2.5,
      charge: { units: 3, refunds: 'unsent-and-failed' },
      replacedCarrierIds: [{ carrierId: 'c-old-0', index: 0 }],
      reportUid: 'uid-ß-1',
      reportPart: 1,
      partReports: [2, 0],
    },
    queue: 0,
    orderKey: 12 + 1 / 3,
    dueAt: T0 + 61_234,
    leaseOwner: 'worker-é',
    leaseUntil: T0 + 90_001,
    reportDueAt: T0 + 95_000,
    timer: 'receipt',
    timerAt: T0 + 123_456,
    carrierIds: ['c-old-0', 'c-0', 'c-1'],
  });
}

/** `row` with its carrier ids sorted: a store may keep them as a set. */
function comparable(row: MessageRow | null | undefined): unknown {
  return row === null || row === undefined ? row : { ...row, carrierIds: [...row.carrierIds].sort() };
}

/** Changes every nested part of `row` the caller could reach. */
function scribble(row: MessageRow): void {
  row.record.text = 'changed';
  row.record.parts[0]!.carrierId = 'changed';
  row.record.parts.push({ index: 9, carrierId: null, outcome: null });
  if (row.record.callback !== null) row.record.callback.attempts = 99;
  row.book.replacedCarrierIds.push({ carrierId: 'changed', index: 0 });
  if (row.book.charge !== null) row.book.charge.units = 99;
  (row.carrierIds as string[]).push('changed');
  row.orderKey = -1;
  row.version = 99;
}

/** Registers the tests of this topic (see the module comment). */
export function roundTripTests({ describe, test, insert, get, sharesRows }: RecordSuiteContext): void {
  /** A test of a store that copies what it keeps, skipped for one that shares its rows. */
  const copying: RecordSuiteContext['test'] = (name, fn) =>
    test(name, async (store, skip) => {
      if (sharesRows) {
        skip(SHARED);
        return;
      }
      await fn(store, skip);
    });

  describe('rows come back as given', () => {
    test('every field of the record, the book and the row, by every read', async (store) => {
      const row = fullRow();
      await insert(store, row);
      const stored = await get(store, row.record.ref);
      const expected = { ...row, version: 0, seq: stored.seq };
      assert.deepEqual(comparable(stored), comparable(expected), `getMessage ${AS_GIVEN}`);
      const [byExternalId] = await store.findByExternalId(row.record.principalId, row.record.externalId, 10);
      assert.deepEqual(comparable(byExternalId), comparable(expected), `findByExternalId ${AS_GIVEN}`);
      assert.deepEqual(comparable(await store.findByCarrierId(['c-1'])), comparable(expected), `findByCarrierId ${AS_GIVEN}`);
      const [due] = await store.dueMessages('receipt', T0 + 123_456, 10);
      assert.deepEqual(comparable(due), comparable(expected), `dueMessages ${AS_GIVEN}`);
      const [report] = await store.claimReports({ owner: 'w', limit: 10, leaseMs: LEASE, now: T0 + 95_000 });
      assert.deepEqual(comparable(report), comparable({ ...expected, version: 1, reportDueAt: T0 + 95_000 + LEASE }), `claimReports ${AS_GIVEN}`);
    });

    test('a written row comes back as written, every field of it', async (store) => {
      const [inserted] = await insert(store, buildMessageRow({ book: { weight: 1 } }));
      const stored = await get(store, inserted!.record.ref);
      const written: MessageRow = { ...fullRow(), record: { ...fullRow().record, ref: stored.record.ref }, seq: stored.seq, version: 1 };
      assert.deepEqual(await store.writeMessages([{ row: written, expectedVersion: 0 }]), [true], `a write at the stored version is applied ${AS_GIVEN}`);
      assert.deepEqual(comparable(await get(store, stored.record.ref)), comparable(written), `getMessage after writeMessages ${AS_GIVEN}`);
    });

    test('a row without sendAt, validUntil, callback or charge keeps its nulls', async (store) => {
      const [row] = await insert(store, buildMessageRow({ queue: null, book: { charge: null, reportUid: null } }));
      const stored = await get(store, row!.record.ref);
      assert.deepEqual(comparable(stored), comparable({ ...row!, seq: stored.seq }), AS_GIVEN);
    });
  });

  describe('rows belong to the caller', () => {
    test('the store changes no row it was given or handed out: inserts, writes and claims store new rows', async (store) => {
      const row = fullRow();
      const given = { ...row, version: 5, seq: 5, leaseUntil: null, dueAt: T0, record: { ...row.record, validUntil: null } };
      const givenBefore = copyOf(given);
      await insert(store, given);
      assert.deepEqual(given, givenBefore, `the insert changed the row it was given (its version or seq, say) ${UNCHANGED}`);
      const read = await get(store, row.record.ref);
      const readBefore = copyOf(read);
      const [claimed] = await store.claimMessages({ owner: 'w', limit: 1, leaseMs: LEASE, now: T0 });
      assert.ok(claimed, 'the row should be claimed');
      assert.deepEqual(read, readBefore, `a claim changed the row getMessage returned before it ${UNCHANGED}`);
      const claimedBefore = copyOf(claimed);
      const [reported] = await store.claimReports({ owner: 'w', limit: 1, leaseMs: LEASE, now: T0 + 95_000 });
      assert.ok(reported, 'the report should be claimed');
      assert.deepEqual(claimed, claimedBefore, `a report claim changed the row a claim returned before it ${UNCHANGED}`);
      const written = { ...reported, version: reported.version + 1, seq: reported.seq, record: { ...reported.record, text: 'written' } };
      const writtenBefore = copyOf(written);
      const reportedBefore = copyOf(reported);
      assert.deepEqual(await store.writeMessages([{ row: written, expectedVersion: reported.version }]), [true]);
      assert.deepEqual(written, writtenBefore, `the write changed the row it was given ${UNCHANGED}`);
      assert.deepEqual(reported, reportedBefore, `the write changed the row a report claim returned before it ${UNCHANGED}`);
      await store.claimMessages({ owner: 'w2', limit: 1, leaseMs: LEASE, now: T0 + LEASE });
      assert.deepEqual(written, writtenBefore, `a claim changed the row a write was given before it ${UNCHANGED}`);
    });

    copying('changing a row after inserting or writing it changes nothing stored', async (store) => {
      const row = fullRow();
      await insert(store, row);
      const snapshot = copyOf(await get(store, row.record.ref));
      scribble(row);
      assert.deepEqual(comparable(await get(store, snapshot.record.ref)), comparable(snapshot), `changing the inserted row changed the stored one ${OWNED}`);
      const written = { ...copyOf(snapshot), version: 1 };
      await store.writeMessages([{ row: written, expectedVersion: 0 }]);
      const after = copyOf(await get(store, snapshot.record.ref));
      scribble(written);
      assert.deepEqual(comparable(await get(store, snapshot.record.ref)), comparable(after), `changing the written row changed the stored one ${OWNED}`);
    });

    copying('changing a row a read or a claim returned changes nothing stored', async (store) => {
      const row = fullRow();
      await insert(store, { ...row, leaseUntil: null, dueAt: T0, record: { ...row.record, validUntil: null } });
      const ref = row.record.ref;
      const reads: [string, () => Promise<MessageRow | null | undefined>][] = [
        ['getMessage', () => store.getMessage(ref)],
        ['findByExternalId', async () => (await store.findByExternalId(row.record.principalId, row.record.externalId, 1))[0]],
        ['findByCarrierId', () => store.findByCarrierId(['c-0'])],
        ['dueMessages', async () => (await store.dueMessages('receipt', T0 + 123_456, 1))[0]],
        ['claimMessages', async () => (await store.claimMessages({ owner: 'w', limit: 1, leaseMs: LEASE, now: T0 }))[0]],
        ['claimReports', async () => (await store.claimReports({ owner: 'w', limit: 1, leaseMs: LEASE, now: T0 + 95_000 }))[0]],
      ];
      for (const [name, read] of reads) {
        const got = await read();
        assert.ok(got, `${name} should return the row`);
        const snapshot = copyOf(await get(store, ref));
        scribble(got);
        assert.deepEqual(comparable(await get(store, ref)), comparable(snapshot), `changing the row ${name} returned changed the stored one ${OWNED}`);
      }
    });
  });
}
