/**
 * The time-aware fields of a message: when it may go (`sendAt`) and until when it is worth
 * sending (`validUntil`), and the rules every storage applies to them
 * (https://github.com/sms-outbox/sms-outbox/blob/main/docs/lifecycle.md#scheduled-sends-validity-and-cancel).
 * Part of the storage contract (the package exports the fields with `Storage`, and the
 * rules as the names below), kept in a file of its own.
 *
 * @module
 */
import { outcome, type Outcome } from '../lifecycle/states.js';

/** When a message may go, and until when it is worth sending; both optional. */
export interface TimedFields {
  /**
   * When the message is due, epoch ms, if later than its acceptance: it is stored
   * `scheduled` and queued (in fair order, tagged then) once due. `null` or absent: at once.
   */
  sendAt?: number | null;
  /**
   * Until when the message may be submitted, epoch ms: once this passes before its first
   * part is submitted, it is never submitted and ends `expired` (`validity_period_elapsed`).
   * `null` or absent: no limit.
   */
  validUntil?: number | null;
}

/** How a message whose validity ended before its submission ends. */
export const VALIDITY_ELAPSED: Outcome = outcome('expired', 'validity_period_elapsed');

/** How a message its sender cancelled ends. */
export const CANCELLED: Outcome = outcome('cancelled', 'cancelled');

/**
 * How long after a lease ends a cancel still treats the message as its owner's, ms. A worker
 * checks its lease before it hands a part to the carrier, and the carrier's answer may take
 * up to a submit timeout to come: a message cancelled in that time would go out cancelled.
 */
export const CANCEL_LEASE_GRACE_MS = 60_000;

/**
 * Whether a lease ending at `leaseUntil` keeps a message from being cancelled at `now`
 * (`Storage.cancelMessages`): while it is live and for {@link CANCEL_LEASE_GRACE_MS} after.
 * `expireUnsent` has no grace: it passes over a message only while its lease is live.
 */
export function leaseBarsCancel(leaseUntil: number | null | undefined, now: number): boolean {
  return leaseUntil !== null && leaseUntil !== undefined && leaseUntil + CANCEL_LEASE_GRACE_MS > now;
}

/** Whether a message valid until `validUntil` may no longer be submitted at `now`. */
export function validityElapsed(validUntil: number | null | undefined, now: number): boolean {
  return validUntil !== null && validUntil !== undefined && validUntil <= now;
}
