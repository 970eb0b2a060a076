/**
 * The port through which the send endpoints hand accepted messages to this instance's
 * submit worker. HTTP knows this narrow interface, not the worker: a message the worker has
 * room for is stored leased to it and submitted without a claim reading it back; any other
 * is stored unleased and claimed as usual.
 */
import type { InsertLease, NewMessage, Priority } from '../storage/contract.js';

/** What the send endpoints tell the worker about the messages of one request. */
export interface MessageHandOff {
  /**
   * The lease to store `count` messages of class `priority` under, taking room for them in
   * this instance's worker; `null` when it has not the room: they are then stored unleased.
   */
  lease(count: number, priority: Priority): InsertLease | null;
  /** The messages were stored, under `lease` (from {@link MessageHandOff.lease}) or unleased. */
  stored(messages: readonly NewMessage[], lease: InsertLease | null): void;
  /** Storing the `count` messages failed: the room `lease` took is given back. */
  notStored(count: number, lease: InsertLease | null): void;
}
