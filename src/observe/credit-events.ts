/**
 * The payloads of the credit events (`credit.charged`, `credit.refunded`; README.md#events),
 * kept beside events.ts, which maps the names to them.
 *
 * @module
 */

/** One message's share of a charge or a refund. */
export interface CreditLine {
  /** The message's `message_ref`. */
  ref: string;
  /** Its SMS units. */
  units: number;
}

/** Payload of `credit.charged`: a request's SMS units were taken, and its messages stored. */
export interface CreditChargedEvent {
  /** Whose credit paid. */
  principalId: string;
  /** The request's profile. */
  profileCode: string;
  /** The units taken: the sum of `messages`' units. */
  units: number;
  /** Each message of the request, in request order. */
  messages: CreditLine[];
}

/**
 * Why units were given back: `not-stored` (taken by a host's hook, then the messages could not
 * be stored), `unsent` (the message ended without reaching the carrier), `failed` (the carrier
 * took it and it ended other than delivered, under the `unsent-and-failed` policy).
 */
export type CreditRefundCause = 'not-stored' | 'unsent' | 'failed';

/** Payload of `credit.refunded`: units given back to a principal. */
export interface CreditRefundedEvent {
  /** Whose credit got them. */
  principalId: string;
  /** The units given back. */
  units: number;
  /** The messages they were taken for. */
  messages: CreditLine[];
  /** Why. */
  cause: CreditRefundCause;
}
