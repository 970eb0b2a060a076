/**
 * The idempotency records of the memory storage: each principal's keys with the answer kept
 * under them. Records are copied in and out, as the messages are.
 *
 * @module
 */
import type { IdempotencyRecord } from '../contract.js';

/** The records, by principal and key. */
export class IdempotencyRecords {
  readonly #byPrincipal = new Map<string, Map<string, IdempotencyRecord>>();

  /**
   * Keeps a copy of `record`, replacing an expired one under its key; throws, keeping
   * nothing, when the key is taken by a record still live when `record` was made.
   */
  take(record: IdempotencyRecord): void {
    let keys = this.#byPrincipal.get(record.principalId);
    if (keys === undefined) this.#byPrincipal.set(record.principalId, (keys = new Map()));
    const held = keys.get(record.key);
    if (held !== undefined && held.expiresAt > record.createdAt) {
      throw new Error(`MemoryStorage: idempotency key ${JSON.stringify(record.key)} is taken`);
    }
    keys.set(record.key, { ...record });
  }

  /** A copy of the principal's live record under `key`, or `null`. */
  find(principalId: string, key: string, now: number): IdempotencyRecord | null {
    const held = this.#byPrincipal.get(principalId)?.get(key);
    return held === undefined || held.expiresAt <= now ? null : { ...held };
  }

  /** Deletes up to `limit` records expired at `now`, oldest expiry first; returns how many. */
  purge(now: number, limit: number): number {
    const expired: IdempotencyRecord[] = [];
    for (const keys of this.#byPrincipal.values()) {
      for (const record of keys.values()) if (record.expiresAt <= now) expired.push(record);
    }
    expired.sort((a, b) => a.expiresAt - b.expiresAt);
    const doomed = expired.slice(0, Math.max(0, limit));
    for (const record of doomed) {
      const keys = this.#byPrincipal.get(record.principalId)!;
      keys.delete(record.key);
      if (keys.size === 0) this.#byPrincipal.delete(record.principalId);
    }
    return doomed.length;
  }
}
