/**
 * The credit ledger's part of the storage contract (exported with `Storage`), kept in a
 * file of its own: what a request's charge carries into `insertMessages`, the error a
 * refused charge throws, the optional methods that top up and read a balance, and the rule
 * that decides what a message that ends gives back.
 *
 * @module
 */
import { isTerminal, type MessageState } from '../lifecycle/states.js';

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
 * A request's charge, stored with its messages ({@link CreditStorage}): `units` (the sum of
 * the messages' `smsCount`) are taken from `principalId`'s balance in the same atomic step
 * as the messages, and each message remembers its own units and `refunds`, the policy that
 * decides its refund when it ends.
 */
export interface CreditCharge {
  /** Whose balance pays: the messages' principal. */
  principalId: string;
  /** The units taken: the sum of the messages' `smsCount`. */
  units: number;
  /** Which of these messages give their units back when they end. */
  refunds: RefundPolicy;
}

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

/**
 * The credit ledger's methods: optional, all or none. A storage with them keeps a balance of
 * SMS units per principal (principal ids compared with case), takes a request's charge
 * (`insertMessages`' `credit`) in the step that stores its messages, checking and taking the
 * balance at once (a read of the balance and a later write of it lets two requests overspend
 * it), and gives a message's units back in the step that ends it, once: by
 * {@link refundUnits}, under the policy stored with its charge. Balances are never negative;
 * a principal that was never topped up has 0.
 */
export interface CreditStorage {
  /** Adds `units` (a positive integer) to `principalId`'s balance; resolves with the new balance. */
  topUpCredit?(principalId: string, units: number, now: number): Promise<number>;
  /** `principalId`'s balance (0 when it was never topped up). */
  creditBalance?(principalId: string): Promise<number>;
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
