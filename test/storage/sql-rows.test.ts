/**
 * The SQL record store's row mapping: a compare-and-set write sets only the columns whose
 * values changed (each column set costs its indexes an update), and a row read back is the
 * row written.
 */
import { describe, expect, it } from 'vitest';
import { changedValues, maskedColumns, WRITTEN_COLUMNS } from '../../src/storage/sql/rows.js';
import type { MessageRow } from '../../src/storage/record-store.js';
import { row } from './mysql-rows.js';

/** `row('a')` with one field changed, and the column that field is stored in. */
const changes: [column: string, change: (r: MessageRow) => MessageRow][] = [
  ['principal_id', (r) => ({ ...r, record: { ...r.record, principalId: 'p2' } })],
  ['external_id', (r) => ({ ...r, record: { ...r.record, externalId: 'other' } })],
  // The acceptance time is `sendAt ?? createdAt`: kept as it was.
  ['created_at', (r) => ({ ...r, record: { ...r.record, createdAt: 5, sendAt: r.record.createdAt } })],
  ['valid_until', (r) => ({ ...r, record: { ...r.record, validUntil: 9_000 } })],
  ['accepted_at', (r) => ({ ...r, record: { ...r.record, sendAt: 7_000 } })],
  ['queue', (r) => ({ ...r, queue: null })],
  ['order_key', (r) => ({ ...r, orderKey: 42 })],
  ['due_at', (r) => ({ ...r, dueAt: 43 })],
  ['lease_owner', (r) => ({ ...r, leaseOwner: 'w2' })],
  ['lease_until', (r) => ({ ...r, leaseUntil: 44 })],
  ['report_due_at', (r) => ({ ...r, reportDueAt: 45 })],
  ['timer', (r) => ({ ...r, timer: 'purge' })],
  ['timer_at', (r) => ({ ...r, timerAt: 46 })],
  ['carrier_id', (r) => ({ ...r, carrierIds: ['c1'] })],
  ['recipient', (r) => ({ ...r, record: { ...r.record, recipient: '254700000009' } })],
  ['state', (r) => ({ ...r, record: { ...r.record, state: 'submitted' } })],
  ['profile_code', (r) => ({ ...r, record: { ...r.record, profileCode: '99' } })],
  ['callback_state', (r) => ({ ...r, record: { ...r.record, callback: { state: 'failed', attempts: 1, lastStatusCode: 500, lastError: 'HTTP 500', nextAttemptAt: null } } })],
];

describe('changedValues', () => {
  it('names exactly the column of each changed field, with its value, and data when the record changed', () => {
    const before = row('a');
    for (const [column, change] of changes) {
      const after = change(before);
      const { mask, values } = changedValues(after, before);
      // A new record object or new carrier ids are new data too; the columns of the fields
      // themselves come first, in the written order.
      const data = after.record !== before.record || after.carrierIds !== before.carrierIds;
      expect(maskedColumns(mask)).toEqual(data ? [column, 'data'] : [column]);
      expect(values).toHaveLength(data ? 2 : 1);
    }
    expect(changes.map(([column]) => column)).toEqual(WRITTEN_COLUMNS.filter((column) => column !== 'data'));
  });

  it('sets nothing but the version for a row whose fields are all the same objects', () => {
    const before = row('a');
    expect(changedValues({ ...before, version: 1 }, before)).toEqual({ mask: 0, values: [] });
  });
});
