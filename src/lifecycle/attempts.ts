/**
 * How many submission attempts a message has had, from what storage records: the count a
 * reader of the status answer (`submit_attempts`) expects.
 */
import type { MessageState, StatusReason } from './states.js';

/** The fields of a stored message the count is read from. */
export interface AttemptFields {
  /** Its state. */
  state: MessageState;
  /** The reason of its terminal state, else `null`. */
  statusReason: StatusReason | null;
  /** The attempts storage gave back for a retry (`Storage.reschedule` adds one each). */
  attempts: number;
}

/**
 * The submission attempts made for `message`, the one in progress not counted.
 *
 * Storage counts only the attempts given back for a retry; the attempt that ended a round
 * is never given back, so it is added here: the one the carrier accepted (the message went
 * on to `submitted` and beyond) or the one that ended it (a permanent carrier error, or the
 * last of `worker.maxAttempts`). A message still `scheduled` or `queued`, or ended with no
 * attempt of its own (`cancelled`, opted out, its validity over before it could go), has
 * made only the attempts storage counted. Storage stays a store of facts; the counting
 * rule lives here, once.
 */
export function submitAttempts(message: AttemptFields): number {
  const { state, statusReason } = message;
  const endedUnsent =
    state === 'scheduled' ||
    state === 'queued' ||
    state === 'cancelled' ||
    statusReason === 'validity_period_elapsed' ||
    statusReason === 'opted_out';
  return endedUnsent ? message.attempts : message.attempts + 1;
}
