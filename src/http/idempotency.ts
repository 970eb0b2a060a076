/**
 * The `Idempotency-Key` header of the send endpoints: a client's retry of a request whose
 * answer it never got (a timeout, a dropped connection) gets the first answer again instead
 * of sending the SMS again. The key is read and checked, the request reduced to a fingerprint, the
 * key looked up, and the stored answer replayed; a first request gets a claim whose record is
 * stored with its messages (storage/contract.ts `IdempotencyRecord`).
 */
import type { Request, Response } from 'express';
import { SmsError } from '../errors.js';
import { isPromiseLike } from '../util/settle.js';
import type { Endpoint, IdempotencyRecord, Storage } from '../storage/contract.js';
import { requestFingerprint } from './request-fingerprint.js';
import { sendJsonText } from './respond.js';

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
  /** The keys of the requests in flight, by principal id (no string is built per request to look one up). */
  readonly #inFlight = new Map<string, Set<string>>();

  constructor(private readonly deps: IdempotencyKeysDeps) {}

  /**
   * Starts a request with `key`: replays the stored answer (and gives `null`, the request
   * answered), or throws 422 (the key was used for another request) or 409 (a request with
   * the key is in flight here), or gives the claim of a first request. Without a promise when
   * the storage's lookup answers without one (a promise turn per keyed request is
   * measurable); otherwise with a native `Promise`, which callers may test with `instanceof`.
   */
  open(res: Response, principalId: string, key: string, endpoint: Endpoint, body: unknown): KeyClaim | null | Promise<KeyClaim | null> {
    let keys = this.#inFlight.get(principalId);
    if (keys === undefined) this.#inFlight.set(principalId, (keys = new Set()));
    else if (keys.has(key)) throw new SmsError('IDEMPOTENCY_IN_FLIGHT', undefined, 1);
    keys.add(key);
    const claim = new FirstRequest(this, principalId, key, requestFingerprint(endpoint, body));
    let found: ReturnType<IdempotencyKeysDeps['find']>;
    try {
      found = this.deps.find(principalId, key, this.deps.now());
    } catch (error) {
      claim.close();
      throw error;
    }
    if (!isPromiseLike(found)) return this.#opened(res, claim, found);
    return Promise.resolve(found).then(
      (record) => this.#opened(res, claim, record),
      (error: unknown) => {
        claim.close();
        throw error;
      },
    );
  }

  /** The claim of a first request, or `null` once the stored answer is replayed (or 422). */
  #opened(res: Response, claim: FirstRequest, found: IdempotencyRecord | null): KeyClaim | null {
    if (found === null) return claim;
    claim.close();
    this.answer(res, found, claim.bodyHash);
    return null;
  }

  /** Replays `record` when it answered the same request, else throws 422. */
  answer(res: Response, record: IdempotencyRecord, bodyHash: string): void {
    if (record.bodyHash !== bodyHash) throw new SmsError('IDEMPOTENCY_CONFLICT');
    this.deps.refund(res);
    res.setHeader('Idempotent-Replayed', 'true');
    sendJsonText(res, record.status, record.body);
  }

  /** The live record under `key`, as {@link IdempotencyKeysDeps.find} has it. */
  async find(principalId: string, key: string): Promise<IdempotencyRecord | null> {
    return this.deps.find(principalId, key, this.deps.now());
  }

  /** A first request's record of its 200 answer `body`, made now. */
  record(principalId: string, key: string, bodyHash: string, body: string): IdempotencyRecord {
    const createdAt = this.deps.now();
    return { principalId, key, bodyHash, status: 200, body, createdAt, expiresAt: createdAt + this.deps.ttlMs };
  }

  /** Lets `key` go on this instance. */
  release(principalId: string, key: string): void {
    const keys = this.#inFlight.get(principalId);
    if (keys === undefined) return;
    keys.delete(key);
    if (keys.size === 0) this.#inFlight.delete(principalId);
  }
}

/** The {@link KeyClaim} of a request that is the first with its key (one object, no closures). */
class FirstRequest implements KeyClaim {
  constructor(
    private readonly keys: IdempotencyKeys,
    private readonly principalId: string,
    private readonly key: string,
    readonly bodyHash: string,
  ) {}

  record(body: string): IdempotencyRecord {
    return this.keys.record(this.principalId, this.key, this.bodyHash, body);
  }

  async answerTaken(res: Response): Promise<boolean> {
    const taken = await this.keys.find(this.principalId, this.key);
    if (taken === null) return false;
    this.keys.answer(res, taken, this.bodyHash);
    return true;
  }

  close(): void {
    this.keys.release(this.principalId, this.key);
  }
}
