/**
 * The payload of the erase event (`subscriber.erased`; docs/erase.md), kept beside events.ts,
 * which maps the name to it. `sms.erase` resolves with the same summary.
 *
 * @module
 */

/** A kind of stored copy an erase covers. */
export type ErasedKind = 'messages' | 'idempotency' | 'inbound';

/**
 * Payload of `subscriber.erased`: one subscriber's stored numbers and texts were erased
 * (`sms.erase`, a data-subject request). It names the subscriber only by the SHA-256 of
 * their number, so a log of it keeps no number.
 */
export interface SubscriberErasedEvent {
  /** The SHA-256 (hex) of the number erased, as stored (international digits): what erased records keep. */
  recipientSha256: string;
  /** Messages to the number erased (the `cancelled` ones among them). */
  messages: number;
  /**
   * Of those, the messages not yet sent that the erase ended `cancelled`. Their pulled
   * reports (`GET {base}/reports`) are these messages, erased with them.
   */
  cancelled: number;
  /** Idempotency answers that listed one of the messages, erased. */
  idempotency: number;
  /** Inbound (MO) messages from the number erased. */
  inbound: number;
  /** The kinds the storage cannot erase (it lacks their methods): their copies are kept until retention purges them. */
  notErased: ErasedKind[];
  /** When the erase began and ended, epoch ms. */
  startedAt: number;
  endedAt: number;
}
