import { describe, expect, it } from 'vitest';
import { IdempotencyRecords } from '../../src/storage/memory/idempotency.js';
import type { IdempotencyRecord } from '../../src/storage/contract.js';

function recordOf(key: string, createdAt: number, body = `answer of ${key}`, principalId = 'p'): IdempotencyRecord {
  return { principalId, key, bodyHash: `hash of ${key}`, status: 200, body, createdAt, expiresAt: createdAt + 1000 };
}

describe('the memory storage idempotency records', () => {
  it('refuses a live key and replaces an expired one', () => {
    const records = new IdempotencyRecords();
    records.take(recordOf('k', 0));
    expect(() => records.take(recordOf('k', 5, 'another answer'))).toThrow(/is taken/);
    expect(records.find('p', 'k', 1)).toEqual(recordOf('k', 0));
    records.take(recordOf('k', 1000, 'the new answer'));
    expect(records.find('p', 'k', 1001)).toEqual(recordOf('k', 1000, 'the new answer'));
  });

  it('purges expired records oldest first, up to the limit, and passes over a replaced one', () => {
    const records = new IdempotencyRecords();
    records.take(recordOf('b', 10));
    records.take(recordOf('a', 0));
    records.take(recordOf('c', 20));
    expect(records.purge(1015, 1)).toBe(1);
    expect(records.find('p', 'a', 0)).toBeNull();
    expect(records.find('p', 'b', 0)).toEqual(recordOf('b', 10));
    // `c` expired at 1020 and is taken again: its first record is no longer its key's.
    records.take(recordOf('c', 1020, 'the new answer'));
    expect(records.purge(5000, 1)).toBe(1);
    expect(records.find('p', 'b', 0)).toBeNull();
    expect(records.find('p', 'c', 1021)).toEqual(recordOf('c', 1020, 'the new answer'));
    expect(records.purge(1500, 10)).toBe(0);
    expect(records.purge(5000, 10)).toBe(1);
    expect(records.purge(5000, 10)).toBe(0);
    expect(records.find('p', 'c', 1021)).toBeNull();
  });

  it('tells principals apart, though their key is the same', () => {
    const records = new IdempotencyRecords();
    records.take(recordOf('k', 0));
    expect(records.find('q', 'k', 1)).toBeNull();
    records.take(recordOf('k', 0, 'the answer to q', 'q'));
    expect(records.find('p', 'k', 1)).toEqual(recordOf('k', 0));
    expect(records.find('q', 'k', 1)).toEqual(recordOf('k', 0, 'the answer to q', 'q'));
  });

  it('keeps what it was given, and gives out copies', () => {
    const records = new IdempotencyRecords();
    const record = recordOf('k', 0);
    records.take(record);
    record.body = 'changed by the caller';
    records.find('p', 'k', 1)!.body = 'changed by a reader';
    expect(records.find('p', 'k', 1)).toEqual(recordOf('k', 0));
  });
});
