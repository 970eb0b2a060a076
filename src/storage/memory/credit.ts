/**
 * The memory storage's credit ledger: a balance per principal, and the charge of each
 * message not yet settled (its units and refund policy), given back once when it ends.
 *
 * @module
 */
import { type CreditCharge } from '../credit-record.js';
import { InsufficientCreditError, refundUnits, type EndedMessage, type RefundPolicy } from '../../lifecycle/credit.js';
import type { MessageState, NewMessage } from '../contract.js';

/** One message's charge, until its message ends. */
interface Charge {
  units: number;
  refunds: RefundPolicy;
}

/** Balances and unsettled charges, in this process's memory. */
export class MemoryCredit {
  readonly #balances = new Map<string, number>();
  readonly #charges = new Map<string, Charge>();

  /** Throws {@link InsufficientCreditError} when `charge` cannot be paid; takes nothing. */
  assertPayable(charge: CreditCharge): void {
    const balance = this.balance(charge.principalId);
    if (balance < charge.units) throw new InsufficientCreditError(charge.units, balance);
  }

  /** Takes `charge` (checked by {@link assertPayable} in the same synchronous step) for `messages`. */
  take(charge: CreditCharge, messages: readonly NewMessage[]): void {
    this.#balances.set(charge.principalId, this.balance(charge.principalId) - charge.units);
    for (const message of messages) this.#charges.set(message.ref, { units: message.smsCount, refunds: charge.refunds });
  }

  /** Settles the charge of `message`, which has just ended from `previousState`: gives back what it owes, once. */
  settle(previousState: MessageState, message: EndedMessage & { ref: string; principalId: string }): void {
    const charge = this.#charges.get(message.ref);
    if (charge === undefined) return;
    this.#charges.delete(message.ref);
    const units = refundUnits(previousState, message, charge.refunds);
    if (units > 0) this.#balances.set(message.principalId, this.balance(message.principalId) + units);
  }

  /** Forgets the charge of a purged message. */
  forget(ref: string): void {
    this.#charges.delete(ref);
  }

  /** Adds `units` to the balance; returns the new balance. */
  topUp(principalId: string, units: number): number {
    const balance = this.balance(principalId) + units;
    this.#balances.set(principalId, balance);
    return balance;
  }

  /** The balance, 0 when never topped up. */
  balance(principalId: string): number {
    return this.#balances.get(principalId) ?? 0;
  }
}
