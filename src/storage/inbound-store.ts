/**
 * The inbound record-store contract: what a record store keeps of inbound (MO) messages
 * when the library makes every decision (`RecordStore.inbound`). An `InboundStore` keeps
 * rows of inbound messages with their webhook's state, claims due webhooks under a lease,
 * and writes a webhook's state only if it is still the one the library read
 * (compare-and-set); it keeps the opt-out list and the parts of long messages. Which state
 * follows an attempt, a replay or an insert is the library's (ledger/inbound-steps.ts), which
 * offers the full `InboundStorage` on top of it.
 *
 * Every method is one atomic step and may be called concurrently, by this instance and by
 * others sharing the database. Times are given, never read from the clock. Records handed
 * to a store or returned by it belong to the caller: a store copies what it keeps.
 *
 * @module
 */
import type { CallbackState } from './callback-record.js';
import type { CallbackListQuery } from './callback-list.js';
import type { ClaimOptions } from './claim-options.js';
import type { InboundInsertOptions, InboundRecord, InboundStorage } from './inbound-record.js';
import type { ErasableInbound } from '../lifecycle/erase-record.js';

/** An inbound message as a webhook list returns it: the record and its insertion order (the list's last tie-break). */
export interface InboundRow {
  /** The message with its webhook's state. */
  record: InboundRecord;
  /** Insertion order, set by the store: a later insert has a greater `seq`. */
  seq: number;
}

/** A compare-and-set write of one webhook's state ({@link InboundStore.write}). */
export interface InboundWrite {
  /** The webhook's uid. */
  uid: string;
  /** Its state as it is to be stored. */
  callback: CallbackState;
  /** The state and attempts the library read: the write happens only if the stored webhook still has both. */
  expected: Pick<CallbackState, 'state' | 'attempts'>;
}

/** The steps an inbound store takes as `InboundStorage` states them (the ledger passes them through). */
type StoredSteps = 'deferInbound' | 'listInbound' | 'purgeInbound' | 'storeInboundPart' | 'setOptOut' | 'findOptOuts' | 'listOptOuts';

/** The inbound rows of a record store (see the module's TSDoc). */
export interface InboundStore extends Pick<InboundStorage, StoredSteps> {
  /**
   * Stores `record` (its `callback` `null`, or pending with no attempt yet), leased under
   * `options.lease` if given, and applies `options.optOut` to (`to`, `from`) in the same
   * step, unless `options.once` finds the same message newest
   * ({@link InboundInsertOptions.once}): then it stores nothing and resolves `duplicate`.
   * A `ref` already stored throws.
   */
  insert(record: InboundRecord, options: InboundInsertOptions): Promise<{ optOutChanged: boolean; duplicate?: true }>;
  /**
   * Leases to `owner` until `now + leaseMs` up to `limit` webhooks that are pending, due
   * (`nextAttemptAt <= now`) and not leased, earliest due first (then insertion order); two
   * claims at once get disjoint sets.
   */
  claim(options: ClaimOptions): Promise<InboundRecord[]>;
  /** The messages whose `key` (their `ref`, or their webhook's `uid`) is one of `values`, in any order. */
  find(key: 'ref' | 'uid', values: readonly string[]): Promise<InboundRecord[]>;
  /**
   * Applies each write whose webhook still has its `expected` state and attempts, ending
   * the webhook's lease in the same step; per write, in order, whether it was applied.
   */
  write(writes: readonly InboundWrite[]): Promise<boolean[]>;
  /**
   * The principal's messages whose webhook is in one of the states `query` asks for
   * (pending and failed when it names none), received in `[since, until)`, newest arrival
   * first (then `seq`), strictly after `query.after`, at most `query.limit`. Served by an
   * index on the principal and the webhook's state. Optional: without it, inbound webhook
   * recovery is not served.
   */
  listWebhooks?(query: CallbackListQuery): Promise<InboundRow[]>;
  /**
   * Gives up to `limit` messages from `from` the fields of `erased`, and forgets the
   * redelivery key each was stored with; returns how many. Optional: the erase step of
   * inbound messages (`EraseStorage.eraseInbound`).
   */
  erase?(from: string, limit: number, erased: ErasableInbound): Promise<number>;
}
