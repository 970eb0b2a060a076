/**
 * The credit ledger's part of the storage contract (exported with `Storage`), kept in a
 * file of its own: what a request's charge carries into `insertMessages`, and the optional
 * methods that top up and read a balance. What a refusal throws and what an ended message
 * gives back are the library's rules (lifecycle/credit.ts).
 *
 * @module
 */
import type { RefundPolicy } from '../lifecycle/credit.js';

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
 * The credit ledger's methods: optional, all or none. A storage with them keeps a balance of
 * SMS units per principal (principal ids compared with case), takes a request's charge
 * (`insertMessages`' `credit`) in the step that stores its messages, checking and taking the
 * balance at once (a read of the balance and a later write of it lets two requests overspend
 * it), and gives a message's units back in the step that ends it, once: by
 * `refundUnits`, under the policy stored with its charge. Balances are never negative;
 * a principal that was never topped up has 0.
 */
export interface CreditStorage {
  /** Adds `units` (a positive integer) to `principalId`'s balance; resolves with the new balance. */
  topUpCredit?(principalId: string, units: number, now: number): Promise<number>;
  /** `principalId`'s balance (0 when it was never topped up). */
  creditBalance?(principalId: string): Promise<number>;
}
