/**
 * The record a send request with an `Idempotency-Key` leaves in storage: part of the storage
 * contract (exported with `Storage`), kept in a file of its own.
 *
 * @module
 */

/**
 * The answer to a send request that carried an `Idempotency-Key`, kept so that a retry with
 * the same key and body gets it again instead of sending again. Stored with the request's
 * messages (`Storage.insertMessages`): a crash keeps both or neither.
 */
export interface IdempotencyRecord {
  /** The principal the key belongs to: keys of two principals never meet. Case-sensitive. */
  principalId: string;
  /** The `Idempotency-Key` header's value, compared exactly: `abc` and `ABC` are two keys. */
  key: string;
  /**
   * What the request asked for: the fingerprint of its endpoint and parsed body (64 hex
   * digits, made by the router), compared for equality only.
   */
  bodyHash: string;
  /** The answer's HTTP status. */
  status: number;
  /** The answer's body, exactly as sent. */
  body: string;
  /** When the request was accepted, epoch ms. */
  createdAt: number;
  /** When the key is free again, epoch ms: the record is live while `now < expiresAt`. */
  expiresAt: number;
}
