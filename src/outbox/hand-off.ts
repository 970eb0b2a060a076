/**
 * The hand-off: how work stored by one part of this instance reaches the part of this
 * instance that does it, without a claim reading it back from storage. Three producers use
 * it: the send endpoints and the inbound handler's confirmation replies (messages, to the
 * submit worker), the receipt handler (delivery reports, to the report sender) and the
 * inbound handler (inbound webhooks, to the report sender).
 *
 * Each does the same three steps: ask for a lease (the consumer takes room for the items,
 * or answers `null` when it has none); store the items under it, or unleased; then say what
 * happened: `stored` (leased items are the consumer's at once, unleased ones are claimed by
 * whichever instance has room) or `notStored` (the room is given back). A producer knows this
 * port only, never the consumer behind it.
 */
import type { InboundRecord, InsertLease, MessageRecord, NewMessage, Priority } from '../storage/contract.js';

/** One consumer's side of the hand-off, for items of type `T` (see the module comment). */
export interface HandOff<T> {
  /**
   * The lease to store `count` items under, taking room for them in the consumer; `null`
   * when it has not the room: they are then stored unleased. `priority` is the messages'
   * class, for a consumer that favours one.
   */
  lease(count: number, priority?: Priority): InsertLease | null;
  /** The items were stored, under `lease` (from {@link HandOff.lease}) or unleased. */
  stored(items: readonly T[], lease: InsertLease | null): void;
  /** The `count` items `lease` was taken for were not stored (or not all): its room is given back. */
  notStored(count: number, lease: InsertLease | null): void;
}

/** The hand-off of accepted messages to this instance's submit worker. */
export type MessageHandOff = HandOff<NewMessage>;

/**
 * A webhook just stored for the report sender: a delivery report (its `uid`, the message
 * it reports on, and the part when it is on one part) or an inbound message (its webhook's `uid` is `inbound.uid`).
 */
export type StoredWebhook = { uid: string; message: MessageRecord; part?: number } | { inbound: InboundRecord };

/** The hand-off of delivery reports and inbound webhooks to this instance's report sender. */
export type WebhookHandOff = HandOff<StoredWebhook>;
