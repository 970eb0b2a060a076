/**
 * The idempotency records of the memory storage: each principal's keys with the answer kept
 * under them, in plain Maps, and the same records by expiry, so that a purge takes the
 * expired ones without looking at the live ones.
 *
 * @module
 */
import { MinHeap } from '../../util/min-heap.js';
import type { IdempotencyCursor, IdempotencyRecord } from '../contract.js';

const expiresFirst = (a: IdempotencyRecord, b: IdempotencyRecord): boolean => a.expiresAt < b.expiresAt;

/** The records, by principal and key, and by expiry (see the module's TSDoc). */
export class IdempotencyRecords {
  /** principalId -> key -> record; two maps, so no pair of texts needs a separator. */
  readonly #byPrincipal = new Map<string, Map<string, IdempotencyRecord>>();
  /**
   * Every record taken, by expiry. A record replaced under its key (it had expired) stays
   * here until it comes up, and is then passed over: it is no longer the one its key holds.
   */
  readonly #byExpiry = new MinHeap<IdempotencyRecord>(expiresFirst);

  /**
   * Keeps a copy of `record`, replacing an expired one under its key; throws, keeping
   * nothing, when the key is taken by a record still live when `record` was made.
   */
  take(record: IdempotencyRecord): void {
    let ofPrincipal = this.#byPrincipal.get(record.principalId);
    const held = ofPrincipal?.get(record.key);
    if (held !== undefined && held.expiresAt > record.createdAt) throw new Error(`MemoryStorage: idempotency key ${JSON.stringify(record.key)} is taken`);
    if (ofPrincipal === undefined) this.#byPrincipal.set(record.principalId, (ofPrincipal = new Map()));
    const kept = { ...record };
    ofPrincipal.set(record.key, kept);
    this.#byExpiry.push(kept);
  }

  /** A copy of the principal's live record under `key`, or `null`. */
  find(principalId: string, key: string, now: number): IdempotencyRecord | null {
    const kept = this.#byPrincipal.get(principalId)?.get(key);
    return kept === undefined || kept.expiresAt <= now ? null : { ...kept };
  }

  /**
   * Copies of up to `limit` records after `after`, by principal id, then each principal's
   * keys in the order they were taken (see `RecordStore.scanIdempotency`); from the
   * principal's first key again when `after.key` is no longer held.
   */
  scan(after: IdempotencyCursor | null, limit: number): IdempotencyRecord[] {
    const out: IdempotencyRecord[] = [];
    const principals = [...this.#byPrincipal.keys()].filter((id) => after === null || id >= after.principalId).sort();
    for (const principalId of principals) {
      const records = this.#byPrincipal.get(principalId)!;
      // Past the cursor's key, when it is still held; from the first key when it is not.
      let skipping = after !== null && principalId === after.principalId && records.has(after.key);
      for (const record of records.values()) {
        if (out.length === limit) return out;
        if (skipping) {
          skipping = record.key !== after!.key;
          continue;
        }
        out.push({ ...record });
      }
    }
    return out;
  }

  /** Replaces the body of each of `records` still held under its key with its `createdAt` (see `RecordStore.rewriteIdempotency`); how many. */
  rewrite(records: readonly IdempotencyRecord[]): number {
    let rewritten = 0;
    for (const record of records) {
      const kept = this.#byPrincipal.get(record.principalId)?.get(record.key);
      if (kept === undefined || kept.createdAt !== record.createdAt) continue;
      kept.body = record.body;
      rewritten++;
    }
    return rewritten;
  }

  /** Deletes up to `limit` records expired at `now`, oldest expiry first; returns how many. */
  purge(now: number, limit: number): number {
    let purged = 0;
    while (purged < limit) {
      const oldest = this.#byExpiry.peek();
      if (oldest === undefined || oldest.expiresAt > now) break;
      this.#byExpiry.pop();
      const ofPrincipal = this.#byPrincipal.get(oldest.principalId);
      if (ofPrincipal?.get(oldest.key) !== oldest) continue;
      ofPrincipal.delete(oldest.key);
      if (ofPrincipal.size === 0) this.#byPrincipal.delete(oldest.principalId);
      purged++;
    }
    return purged;
  }
}
