/**
 * The library's rules for a message's time fields (`sendAt`, `validUntil`) and for cancel:
 * how such a message ends, and when a lease keeps it from being cancelled. Storage adapters
 * apply them as they are; they are decided here, once.
 *
 * @module
 */
import { outcome, type Outcome } from './states.js';

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
