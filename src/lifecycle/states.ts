/**
 * The message lifecycle (docs/lifecycle.md): the states, the reasons a terminal state
 * carries, and the rule that folds the receipts of a multipart message into one state.
 *
 * Pure functions and constants only, so every storage adapter applies the same rules.
 */

/**
 * A message sent for later waits in `scheduled` until its `send_at`, then in `queued` until
 * the carrier accepts it, then `submitted`.
 */
export type PendingState = 'scheduled' | 'queued' | 'submitted';

/** Every pending state, in lifecycle order. */
export const PENDING_STATES: readonly PendingState[] = ['scheduled', 'queued', 'submitted'];

/** A state a message never leaves. */
export type TerminalState = 'delivered' | 'undelivered' | 'expired' | 'rejected' | 'failed' | 'cancelled';

/** Every state a message can be in. */
export type MessageState = PendingState | TerminalState;

/** Every terminal state, for validation and for SQL `IN (...)` lists. */
export const TERMINAL_STATES: readonly TerminalState[] = [
  'delivered',
  'undelivered',
  'expired',
  'rejected',
  'failed',
  'cancelled',
];

const terminal = new Set<string>(TERMINAL_STATES);

/** True when `state` is one a message never leaves. */
export function isTerminal(state: string): state is TerminalState {
  return terminal.has(state);
}

/**
 * The reasons a terminal state carries, in the snake_case spelling of the provider's
 * published webhook shape (`delivered_to_terminal` is `DeliveredToTerminal` of its list).
 */
export type StatusReason =
  | 'delivered_to_terminal'
  | 'absent_subscriber'
  | 'delivery_impossible'
  | 'sender_name_blacklisted'
  | 'invalid_source_address'
  | 'expired'
  | 'rejected'
  | 'unknown'
  | 'validity_period_elapsed'
  | 'cancelled'
  | 'opted_out';

/** The human-readable text sent as `status_description` for each reason. */
export const STATUS_DESCRIPTIONS: Readonly<Record<StatusReason, string>> = {
  delivered_to_terminal: 'Message delivered to terminal',
  absent_subscriber: 'Subscriber absent or unreachable',
  delivery_impossible: 'Delivery to the subscriber is impossible',
  sender_name_blacklisted: 'Sender name is blacklisted',
  invalid_source_address: 'Invalid source address',
  expired: 'Message validity period expired',
  rejected: 'Message rejected by the carrier',
  unknown: 'Final status unknown',
  validity_period_elapsed: 'Validity period elapsed before the message could be submitted',
  cancelled: 'Cancelled by the sender before submission',
  opted_out: 'The subscriber opted out of messages from this sender',
};

/** A terminal outcome: the state with its reason and description. */
export interface Outcome {
  /** The terminal state reached. */
  state: TerminalState;
  /** Machine-readable reason, one of the published set. */
  reason: StatusReason;
  /** Human-readable text for `status_description`. */
  description: string;
}

/** Builds an {@link Outcome} with the standard description of its reason. */
export function outcome(state: TerminalState, reason: StatusReason, description?: string): Outcome {
  return { state, reason, description: description ?? STATUS_DESCRIPTIONS[reason] };
}

/** The outcome of one part of a message, or `null` while its receipt is awaited. */
export type PartOutcome = Outcome | null;

/**
 * Folds the outcomes of a message's parts into the message's outcome.
 *
 * Returns `null` while any part is still awaiting its receipt: a message is terminal only
 * when every part is. It is `delivered` only if every part was; otherwise it takes the
 * outcome of the first part (by index) that was not delivered, so the caller learns the
 * failure rather than a partial success.
 */
export function foldParts(parts: readonly PartOutcome[]): Outcome | null {
  let firstFailure: Outcome | null = null;
  let last: Outcome | null = null;
  for (const part of parts) {
    if (part === null) return null;
    last = part;
    if (firstFailure === null && part.state !== 'delivered') firstFailure = part;
  }
  return firstFailure ?? last;
}
