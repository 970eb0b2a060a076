/**
 * The idempotency records of the memory storage: each principal's keys with the answer kept
 * under them.
 *
 * The storage keeps a record per keyed request for a day, as it keeps the messages, and reads
 * one back only for a retry. Kept in the JS heap, as objects or as strings, with their keys in
 * a Map, they were most of what the header cost the memory storage: the garbage collector
 * copied each while it was young and marked all of them on every full collection. So nothing
 * of a kept record is a heap object here:
 * - its text, packed (below), is in a {@link TextArena}, with its expiry;
 * - the map from keys to texts is keyed by a 31-bit hash of the principal and the key, a
 *   small integer that V8 keeps inside the map's table, not as an object. Keys whose hashes
 *   collide share an entry, a list, and a record is told from another by its text.
 *
 * @module
 */
import { randomInt } from 'node:crypto';
import type { IdempotencyRecord } from '../contract.js';
import { TextArena } from './text-arena.js';

/** The packed text's leading numbers, before the texts they measure. */
const NUMBERS = 6;

/**
 * `record` as one flat string: `<createdAt>,<expiresAt>,<status>,<principal length>,<key
 * length>,<hash length>,<principalId><key><bodyHash><body>` (`Array#join` writes it flat).
 */
function pack(record: IdempotencyRecord): string {
  const { principalId, key, bodyHash } = record;
  return [record.createdAt, record.expiresAt, record.status, principalId.length, key.length, bodyHash.length, principalId + key + bodyHash + record.body].join(',');
}

/** The record `packed` holds. */
function unpack(packed: string): IdempotencyRecord {
  const numbers: number[] = [];
  let at = 0;
  for (let i = 0; i < NUMBERS; i++) {
    const comma = packed.indexOf(',', at);
    numbers.push(Number(packed.slice(at, comma)));
    at = comma + 1;
  }
  const [createdAt, expiresAt, status, principalLength, keyLength, hashLength] = numbers as [number, number, number, number, number, number];
  const texts = [principalLength, keyLength, hashLength].map((length) => packed.slice(at, (at += length)));
  const [principalId, key, bodyHash] = texts as [string, string, string];
  return { principalId, key, bodyHash, status, body: packed.slice(at), createdAt, expiresAt };
}

/**
 * FNV-1a of `principalId` and `key`, from a seed of the storage's own (a client cannot choose
 * keys that collide on every instance), cut to 31 bits: V8 keeps such an integer in the map's
 * table, as it keeps any small integer.
 */
export function keyHash(seed: number, principalId: string, key: string): number {
  let hash = seed;
  for (let i = 0; i < principalId.length; i++) hash = Math.imul(hash ^ principalId.charCodeAt(i), 0x01000193);
  // A separator, so that ("ab", "c") and ("a", "bc") are hashed apart.
  hash = Math.imul(hash ^ 0xffff, 0x01000193);
  for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193);
  return hash >> 1;
}

/** An entry of the map: one record's number, or several when their keys' hashes collide. */
type Entry = number | number[];

function numbersOf(entry: Entry): readonly number[] {
  return typeof entry === 'number' ? [entry] : entry;
}

/** The records, by the hash of principal and key (see the module's TSDoc). */
export class IdempotencyRecords {
  readonly #byHash = new Map<number, Entry>();
  /** The packed records, each kept with its expiry. */
  readonly #packed = new TextArena();

  /** @param seed The hash's seed; random unless a test needs keys it knows to collide. */
  constructor(private readonly seed = randomInt(2 ** 31)) {}

  /**
   * Keeps `record`, replacing an expired one under its key; throws, keeping nothing, when the
   * key is taken by a record still live when `record` was made.
   */
  take(record: IdempotencyRecord): void {
    const hash = keyHash(this.seed, record.principalId, record.key);
    let entry = this.#byHash.get(hash);
    if (entry !== undefined) {
      const held = this.#held(entry, record.principalId, record.key);
      if (held !== null) {
        if (held.record.expiresAt > record.createdAt) throw new Error(`MemoryStorage: idempotency key ${JSON.stringify(record.key)} is taken`);
        entry = this.#remove(hash, held.id);
      }
    }
    const id = this.#packed.add(pack(record), record.expiresAt);
    this.#byHash.set(hash, entry === undefined ? id : [...numbersOf(entry), id]);
  }

  /** The principal's live record under `key`, or `null`. */
  find(principalId: string, key: string, now: number): IdempotencyRecord | null {
    const entry = this.#byHash.get(keyHash(this.seed, principalId, key));
    if (entry === undefined) return null;
    const held = this.#held(entry, principalId, key);
    return held === null || held.record.expiresAt <= now ? null : held.record;
  }

  /** Deletes up to `limit` records expired at `now`, oldest expiry first; returns how many. */
  purge(now: number, limit: number): number {
    const expired: { hash: number; id: number; expiresAt: number }[] = [];
    for (const [hash, entry] of this.#byHash) {
      for (const id of numbersOf(entry)) {
        const expiresAt = this.#packed.time(id);
        if (expiresAt <= now) expired.push({ hash, id, expiresAt });
      }
    }
    expired.sort((a, b) => a.expiresAt - b.expiresAt);
    const doomed = expired.slice(0, Math.max(0, limit));
    for (const { hash, id } of doomed) this.#remove(hash, id);
    return doomed.length;
  }

  /** The record of `entry` kept under `principalId` and `key`, with its number, or `null`. */
  #held(entry: Entry, principalId: string, key: string): { id: number; record: IdempotencyRecord } | null {
    for (const id of numbersOf(entry)) {
      const record = unpack(this.#packed.text(id));
      if (record.principalId === principalId && record.key === key) return { id, record };
    }
    return null;
  }

  /** Deletes record `id` of the entry under `hash`; returns what is left of the entry. */
  #remove(hash: number, id: number): Entry | undefined {
    this.#packed.delete(id);
    const rest = numbersOf(this.#byHash.get(hash)!).filter((other) => other !== id);
    const entry = rest.length === 0 ? undefined : rest.length === 1 ? rest[0]! : rest;
    if (entry === undefined) this.#byHash.delete(hash);
    else this.#byHash.set(hash, entry);
    return entry;
  }
}
