/**
 * The library's credit rules: which ended messages give their units back, how many, and the
 * error a refused charge throws. A storage with the credit ledger applies them as they are.
 *
 * @module
 */
import { isTerminal, type MessageState } from './states.js';

/**
 * Which ended messages give their SMS units back:
 * - `unsent`: those that ended without reaching the carrier (refused by the carrier's route
 *   at submission, opted out, validity elapsed, cancelled, or out of submission attempts):
 *   the units of their parts the carrier never accepted;
 * - `unsent-and-failed`: those too, and every message that ends other than `delivered`
 *   after the carrier took it (rejected, undelivered, expired): all its units.
 */
export type RefundPolicy = 'unsent' | 'unsent-and-failed';

/**
 * Thrown by `insertMessages` when the principal's balance is below a charge's units:
 * nothing is stored and nothing is taken. Told apart by `name` (or `code`), not by
 * `instanceof`: a host's adapter may throw its own.
 */
export class InsufficientCreditError extends Error {
  /** `INSUFFICIENT_CREDIT`, the 402 answer's code. */
  readonly code = 'INSUFFICIENT_CREDIT';
  /** The units the request needed. */
  readonly units: number;
  /** The principal's balance when it was refused, if the adapter knows it. */
  readonly balance: number | undefined;

  constructor(units: number, balance?: number) {
    super(`Insufficient credit: the request needs ${units} SMS units${balance === undefined ? '' : `, the balance is ${balance}`}`);
    this.name = 'InsufficientCreditError';
    this.units = units;
    this.balance = balance;
  }
}

/** Whether `error` is an {@link InsufficientCreditError} (by name: bundles hold their own copies). */
export function isInsufficientCredit(error: unknown): error is InsufficientCreditError {
  return error instanceof Error && (error.name === 'InsufficientCreditError' || (error as { code?: unknown }).code === 'INSUFFICIENT_CREDIT');
}

/** What {@link refundUnits} reads of a message after its transition. */
export interface EndedMessage {
  state: MessageState;
  smsCount: number;
  parts: readonly { carrierId: string | null }[];
}

/**
 * The units a charged message gives back on its transition from `previousState`: none unless
 * the transition ended it other than `delivered`; for one that never reached the carrier
 * (`previousState` not `submitted`), the units of its parts the carrier never accepted; for
 * one that did, all of them under `unsent-and-failed` only. An adapter computes the refund
 * with this, or the same rule in its own terms: the bundled SQL adapters' refund triggers
 * (their migrations) do, so a change here needs a migration there.
 */
export function refundUnits(previousState: MessageState, message: EndedMessage, refunds: RefundPolicy): number {
  if (isTerminal(previousState) || !isTerminal(message.state) || message.state === 'delivered') return 0;
  if (refunds === 'unsent-and-failed') return message.smsCount;
  if (previousState === 'submitted') return 0;
  let unsent = 0;
  for (const part of message.parts) if (part.carrierId === null) unsent++;
  return unsent;
}
