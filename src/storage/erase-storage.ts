/**
 * The erase part of the storage contract (exported with `Storage`), kept in a file of its
 * own like the credit's and the counters': the optional methods `sms.erase({ recipient })`
 * (a data-subject request, docs/erase.md) runs on, each a bounded step the router calls
 * again until it is done, so an erase of a large history never holds the process. What an
 * erased record keeps is the library's rule (`eraseMessage`, `eraseInbound`,
 * `eraseAnswerBody`, lifecycle/erase-record.ts); the bundled storages apply it in their
 * ledger.
 *
 * @module
 */
import type { MessageState } from '../lifecycle/states.js';
import type { MessageRecord } from './message-record.js';

/** A message an erase step ended (the contract's `Transition`, never with a leased report). */
export interface ErasedTransition {
  /** The message, ended `cancelled` and erased. */
  message: MessageRecord;
  /** Its state before (`scheduled` or `queued`). */
  previousState: MessageState;
}

/** What one step of {@link EraseStorage.eraseMessages} did. */
export interface ErasedMessages {
  /** How many messages it erased. */
  erased: number;
  /** Their refs: the idempotency answers that list them are erased next ({@link EraseStorage.eraseIdempotency}). */
  refs: string[];
  /** The messages it ended (those not yet sent: `cancelled`), as transitions, their reports stored with them. */
  transitions: ErasedTransition[];
  /** Where the next step starts; `null` when no message to the number is left. */
  next: string | null;
}

/** What one step of a scan ({@link EraseStorage.eraseIdempotency}) did. */
export interface ErasedPage<Cursor> {
  /** How many entries of the page it erased. */
  erased: number;
  /** Where the next step starts; `null` once the whole table was read. */
  next: Cursor | null;
}

/** Where a scan of the idempotency records stands: after this principal's key. */
export interface IdempotencyCursor {
  principalId: string;
  key: string;
}

/**
 * The erase methods: optional, each on its own (without one, `sms.erase` reports that kind
 * as not erased). Each is one bounded step, and any may run while the router works.
 */
export interface EraseStorage {
  /**
   * Erases up to `limit` messages to `recipient` (international digits, as stored) from
   * `after` (the `next` of the step before; `null` first) on: each record's number becomes
   * `[erased]` with `recipientSha256`, its `recipientAsSent` goes and its text is redacted
   * (`eraseMessage`), so the list by recipient no longer finds it. A message not yet sent
   * (`scheduled` or `queued`) is ended `cancelled` in the same write (its charge refunded, its
   * report stored): a number that is erased is sent nothing more. One already at the
   * carrier keeps its state and gets its receipt.
   */
  eraseMessages?(recipient: string, after: string | null, limit: number, now: number): Promise<ErasedMessages>;

  /**
   * Reads up to `limit` idempotency records from after `after` (`null`: the first) and erases
   * the number of each message of `refs` in their answers (`eraseAnswerBody`).
   */
  eraseIdempotency?(refs: ReadonlySet<string>, after: IdempotencyCursor | null, limit: number): Promise<ErasedPage<IdempotencyCursor>>;

  /**
   * Erases up to `limit` inbound (MO) messages from `from` (`eraseInbound`: the sender
   * `[erased]`, the text `[redacted]`, the redelivery key it was stored with gone); returns how
   * many it erased (fewer than `limit`: none is left). With the inbound methods. The parts
   * of a long MO still waiting for the rest are keyed by a hash and go with retention.
   */
  eraseInbound?(from: string, limit: number): Promise<number>;
}
