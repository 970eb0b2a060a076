/**
 * The idempotency records of the memory storage: each principal's keys with the answer kept
 * under them.
 *
 * A record is kept packed into one string, `<createdAt>,<expiresAt>,<status>,<hash
 * length>,<bodyHash><body>`, and unpacked only when read (a replay, or the sweep). The
 * storage keeps a record per keyed request for a day, as it keeps the messages: one string
 * per key instead of an object, two boxed numbers and two strings is a fifth of the objects
 * for the garbage collector to copy and mark, which is most of what the header costs the
 * memory storage.
 *
 * @module
 */
import type { IdempotencyRecord } from '../contract.js';

/** `record` as one flat string (`Array#join` writes one; a template literal would keep the pieces). */
function pack(record: IdempotencyRecord): string {
  return [record.createdAt, record.expiresAt, record.status, record.bodyHash.length, record.bodyHash + record.body].join(',');
}

/** The record `packed` holds, under `principalId` and `key`. */
function unpack(principalId: string, key: string, packed: string): IdempotencyRecord {
  const fields: number[] = [];
  let at = 0;
  for (let i = 0; i < 4; i++) {
    const comma = packed.indexOf(',', at);
    fields.push(Number(packed.slice(at, comma)));
    at = comma + 1;
  }
  const [createdAt, expiresAt, status, hashLength] = fields as [number, number, number, number];
  return { principalId, key, bodyHash: packed.slice(at, at + hashLength), status, body: packed.slice(at + hashLength), createdAt, expiresAt };
}

/** When the record `packed` holds expires, epoch ms (the second field). */
function expiryOf(packed: string): number {
  const from = packed.indexOf(',') + 1;
  return Number(packed.slice(from, packed.indexOf(',', from)));
}

/** The records, by principal and key. */
export class IdempotencyRecords {
  readonly #byPrincipal = new Map<string, Map<string, string>>();

  /**
   * Keeps `record`, replacing an expired one under its key; throws, keeping nothing, when the
   * key is taken by a record still live when `record` was made.
   */
  take(record: IdempotencyRecord): void {
    let keys = this.#byPrincipal.get(record.principalId);
    if (keys === undefined) this.#byPrincipal.set(record.principalId, (keys = new Map()));
    const held = keys.get(record.key);
    if (held !== undefined && expiryOf(held) > record.createdAt) {
      throw new Error(`MemoryStorage: idempotency key ${JSON.stringify(record.key)} is taken`);
    }
    keys.set(record.key, pack(record));
  }

  /** The principal's live record under `key`, or `null`. */
  find(principalId: string, key: string, now: number): IdempotencyRecord | null {
    const held = this.#byPrincipal.get(principalId)?.get(key);
    if (held === undefined) return null;
    const record = unpack(principalId, key, held);
    return record.expiresAt <= now ? null : record;
  }

  /** Deletes up to `limit` records expired at `now`, oldest expiry first; returns how many. */
  purge(now: number, limit: number): number {
    const expired: { principalId: string; key: string; expiresAt: number }[] = [];
    for (const [principalId, keys] of this.#byPrincipal) {
      for (const [key, held] of keys) {
        const expiresAt = expiryOf(held);
        if (expiresAt <= now) expired.push({ principalId, key, expiresAt });
      }
    }
    expired.sort((a, b) => a.expiresAt - b.expiresAt);
    const doomed = expired.slice(0, Math.max(0, limit));
    for (const { principalId, key } of doomed) {
      const keys = this.#byPrincipal.get(principalId)!;
      keys.delete(key);
      if (keys.size === 0) this.#byPrincipal.delete(principalId);
    }
    return doomed.length;
  }
}
