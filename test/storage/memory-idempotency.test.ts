import { describe, expect, it } from 'vitest';
import { IdempotencyRecords, keyHash } from '../../src/storage/memory/idempotency.js';
import type { IdempotencyRecord } from '../../src/storage/contract.js';

const SEED = 1;

/** Two keys of principal `p` whose hashes collide under SEED (a birthday search: about 2^16 tries). */
function collidingKeys(): [string, string] {
  const seen = new Map<number, string>();
  for (let i = 0; ; i++) {
    const key = `key-${i}`;
    const hash = keyHash(SEED, 'p', key);
    const other = seen.get(hash);
    if (other !== undefined) return [other, key];
    seen.set(hash, key);
  }
}

function recordOf(key: string, createdAt: number, body = `answer of ${key}`): IdempotencyRecord {
  return { principalId: 'p', key, bodyHash: `hash of ${key}`, status: 200, body, createdAt, expiresAt: createdAt + 1000 };
}

describe('the memory storage idempotency records', () => {
  const [first, second] = collidingKeys();

  it('keeps two keys whose hashes collide apart', () => {
    expect(keyHash(SEED, 'p', first)).toBe(keyHash(SEED, 'p', second));
    const records = new IdempotencyRecords(SEED);
    records.take(recordOf(first, 0));
    expect(records.find('p', second, 1)).toBeNull();
    records.take(recordOf(second, 0));
    expect(records.find('p', first, 1)).toEqual(recordOf(first, 0));
    expect(records.find('p', second, 1)).toEqual(recordOf(second, 0));
    expect(() => records.take(recordOf(second, 5, 'another answer'))).toThrow(/is taken/);
    expect(records.find('p', second, 1)).toEqual(recordOf(second, 0));
  });

  it('replaces an expired record of a colliding key and keeps the other', () => {
    const records = new IdempotencyRecords(SEED);
    records.take(recordOf(first, 0));
    records.take(recordOf(second, 500));
    records.take(recordOf(first, 1000, 'the new answer'));
    expect(records.find('p', first, 1001)).toEqual(recordOf(first, 1000, 'the new answer'));
    expect(records.find('p', second, 1001)).toEqual(recordOf(second, 500));
  });

  it('purges expired records oldest first, colliding ones included, up to the limit', () => {
    const records = new IdempotencyRecords(SEED);
    records.take(recordOf(second, 10));
    records.take(recordOf(first, 0));
    records.take(recordOf('other', 20));
    expect(records.purge(1015, 1)).toBe(1);
    expect(records.find('p', first, 0)).toBeNull();
    expect(records.find('p', second, 0)).toEqual(recordOf(second, 10));
    expect(records.purge(1015, 10)).toBe(1);
    expect(records.find('p', second, 0)).toBeNull();
    expect(records.find('p', 'other', 0)).toEqual(recordOf('other', 20));
    expect(records.purge(5000, 10)).toBe(1);
    expect(records.purge(5000, 10)).toBe(0);
  });

  it('tells principals apart, though their key is the same', () => {
    const records = new IdempotencyRecords(SEED);
    records.take(recordOf('k', 0));
    expect(records.find('q', 'k', 1)).toBeNull();
    expect(records.find('p', 'k', 1)).toEqual(recordOf('k', 0));
  });
});
