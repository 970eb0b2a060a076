/**
 * The `Idempotency-Key` header of the send endpoints: a client's retry of a request whose
 * answer it never got (a timeout, a dropped connection) gets the first answer again instead
 * of sending the SMS again. The key is read and checked, the request reduced to a hash, the
 * key looked up, and the stored answer replayed; a first request gets a claim whose record is
 * stored with its messages (storage/contract.ts `IdempotencyRecord`).
 */
import { hash } from 'node:crypto';
import type { Request, Response } from 'express';
import { SmsError } from '../errors.js';
import type { Endpoint, IdempotencyRecord, Storage } from '../storage/contract.js';
import { sendJsonText } from './respond.js';

/** How long a key holds its answer. */
export interface IdempotencyOptions {
  /**
   * How long after a request was accepted its `Idempotency-Key` replays its answer, ms; then
   * the key is free again, and its record is swept with the retention work. Default 24 hours.
   */
  ttlMs?: number;
}

/** The idempotency defaults. */
export const IDEMPOTENCY_DEFAULTS: Required<IdempotencyOptions> = {
  ttlMs: 24 * 3600_000,
};

/**
 * A valid key: 1 to 255 visible ASCII characters (0x21-0x7E). No spaces: HTTP parsers and
 * proxies trim them at the ends of a header value (so `"k "` and `"k"` would be one key after
 * one hop and two after another), and two header lines are joined with `", "`, so a request
 * with two keys is refused rather than given a key it did not send.
 */
const VALID_KEY = /^[\x21-\x7e]{1,255}$/;

const invalidKey = new SmsError('INVALID_IDEMPOTENCY_KEY');
const unsupported = new SmsError('INVALID_IDEMPOTENCY_KEY', "Idempotency-Key is not supported by this gateway's storage");

/**
 * The request's `Idempotency-Key`, or `null` when it has none. Throws 400
 * `INVALID_IDEMPOTENCY_KEY` for a malformed one, or when the storage cannot keep keys
 * (`supported` false): a client that relies on the key must not have its retries sent twice.
 */
export function idempotencyKeyOf(req: Request, supported: boolean): string | null {
  const key = req.headers['idempotency-key'];
  if (key === undefined) return null;
  if (!supported) throw unsupported;
  if (typeof key !== 'string' || !VALID_KEY.test(key)) throw invalidKey;
  return key;
}

/**
 * `value` as JSON with every object's keys sorted and no whitespace: the same text for two
 * bodies that differ only in key order or spacing. Numbers are written as `JSON.stringify`
 * writes the parsed value (`1.0` and `1` are one number).
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) {
    let text = '[';
    for (let i = 0; i < value.length; i++) text += (i > 0 ? ',' : '') + canonicalJson(value[i]);
    return `${text}]`;
  }
  const object = value as Record<string, unknown>;
  const keys = Object.keys(object).sort();
  let text = '{';
  for (let i = 0; i < keys.length; i++) text += `${i > 0 ? ',' : ''}${JSON.stringify(keys[i])}:${canonicalJson(object[keys[i]!])}`;
  return `${text}}`;
}

/** SHA-256 (hex) of what a request asks for: its endpoint and its canonical body. */
export function requestHash(endpoint: Endpoint, body: unknown): string {
  // The one-shot form: no Hash object per request.
  return hash('sha256', `${endpoint}\n${canonicalJson(body)}`, 'hex');
}

/** A first request's hold on its key, from {@link IdempotencyKeys.open}. */
export interface KeyClaim {
  /** The record to store with the request's messages, for its 200 answer `body`. */
  record(body: string): IdempotencyRecord;
  /**
   * After the messages could not be stored: answers the request from the record another
   * request stored under the key meanwhile (a replay, or 422), and returns true; or returns
   * false when the key is still free (the failure was something else).
   */
  answerTaken(res: Response): Promise<boolean>;
  /** Lets the key go on this instance; called once the request is answered, whatever happened. */
  close(): void;
}

/** What {@link IdempotencyKeys} needs. */
export interface IdempotencyKeysDeps {
  /** Looks keys up; the storage's `findIdempotency`. */
  find: NonNullable<Storage['findIdempotency']>;
  ttlMs: number;
  now: () => number;
  /** Gives back the request-limit hit of a replayed request (the limiter counted it before the body was read). */
  refund: (res: Response) => void;
}

/**
 * The keys of the send endpoints: the ones this instance is processing, and the lookups of
 * the stored ones. A key in flight here is answered 409 at once; across instances the
 * storage's insert decides (its contract: one request per key), and the loser replays the
 * winner's answer.
 */
export class IdempotencyKeys {
  /** `<key>\n<principal id>` of each request in flight (a key holds no newline). */
  readonly #inFlight = new Set<string>();

  constructor(private readonly deps: IdempotencyKeysDeps) {}

  /**
   * Starts a request with `key`: replays the stored answer (and returns `null`, the request
   * answered), or throws 422 (the key was used for another request) or 409 (a request with
   * the key is in flight here), or returns the claim of a first request.
   */
  async open(res: Response, principalId: string, key: string, endpoint: Endpoint, body: unknown): Promise<KeyClaim | null> {
    const id = `${key}\n${principalId}`;
    if (this.#inFlight.has(id)) {
      throw new SmsError('IDEMPOTENCY_IN_FLIGHT', undefined, 1);
    }
    this.#inFlight.add(id);
    const close = (): void => void this.#inFlight.delete(id);
    const bodyHash = requestHash(endpoint, body);
    let found: IdempotencyRecord | null;
    try {
      found = await this.deps.find(principalId, key, this.deps.now());
    } catch (error) {
      close();
      throw error;
    }
    if (found !== null) {
      close();
      this.#answer(res, found, bodyHash);
      return null;
    }
    const createdAt = this.deps.now();
    return {
      record: (answer) => ({ principalId, key, bodyHash, status: 200, body: answer, createdAt, expiresAt: createdAt + this.deps.ttlMs }),
      answerTaken: async (answering) => {
        const taken = await this.deps.find(principalId, key, this.deps.now());
        if (taken === null) return false;
        this.#answer(answering, taken, bodyHash);
        return true;
      },
      close,
    };
  }

  /** Replays `record` when it answered the same request, else throws 422. */
  #answer(res: Response, record: IdempotencyRecord, bodyHash: string): void {
    if (record.bodyHash !== bodyHash) throw new SmsError('IDEMPOTENCY_CONFLICT');
    this.deps.refund(res);
    res.setHeader('Idempotent-Replayed', 'true');
    sendJsonText(res, record.status, record.body);
  }
}
