/**
 * Credit: what a request costs, asked for before its messages are stored (docs/credit.md).
 * The request's SMS units are taken from its principal's credit, by the storage's ledger
 * (in the step that stores the messages) or by the host's hook (before it); a refusal is
 * answered 402 `INSUFFICIENT_CREDIT` and nothing is stored. A message that ends without
 * reaching the carrier gives its units back (and a failed one, by the refund policy): the
 * ledger in the step that ends it, the hook when this instance hears of the transition.
 *
 * @module
 */
import { SmsError } from '../errors.js';
import { isTerminal, type MessageState } from '../lifecycle/states.js';
import type { CreditLine, CreditRefundedEvent } from '../observe/credit-events.js';
import type { Emit } from '../observe/events.js';
import { type CreditCharge } from '../storage/credit-record.js';
import { isInsufficientCredit, refundUnits, type RefundPolicy } from '../lifecycle/credit.js';
import type { MessageRecord, NewMessage, Storage } from '../storage/contract.js';
import type { CreditConfig, CreditRefund } from './options.js';

export type { RefundPolicy };

/** The balances of the storage's ledger, for the host (`router.credit`). */
export interface CreditAccounts {
  /** Adds `units` (a positive integer) to `principalId`'s balance; resolves with the new balance. */
  topUp(principalId: string, units: number): Promise<number>;
  /** `principalId`'s balance in SMS units (0 when never topped up). */
  balance(principalId: string): Promise<number>;
}

/** What {@link CreditGate} needs. */
export interface CreditGateDeps {
  config: CreditConfig;
  storage: Storage;
  emit: Emit;
  now: () => number;
}

/** The lines of `messages`: each one's ref and units. */
function linesOf(messages: readonly NewMessage[]): CreditLine[] {
  return messages.map((m) => ({ ref: m.ref, units: m.smsCount }));
}

/** The sum of `lines`' units. */
function unitsOf(lines: readonly CreditLine[]): number {
  let units = 0;
  for (const line of lines) units += line.units;
  return units;
}

/** The router's side of credit: charging a request, and the refunds of the messages that end. */
export class CreditGate {
  /** The storage's balances for the host, or `null` with a hook. */
  readonly accounts: CreditAccounts | null;

  constructor(private readonly deps: CreditGateDeps) {
    const { storage, config, now } = deps;
    this.accounts =
      config.ledger !== 'storage'
        ? null
        : {
            topUp: async (principalId, units) => {
              if (typeof principalId !== 'string' || principalId === '') throw new TypeError('credit.topUp: principalId must be a non-empty string');
              if (!Number.isSafeInteger(units) || units <= 0) throw new TypeError(`credit.topUp: units must be a positive integer, got ${String(units)}`);
              return storage.topUpCredit!(principalId, units, now());
            },
            balance: async (principalId) => storage.creditBalance!(principalId),
          };
  }

  /**
   * Takes the units of `messages` (one request's, of `profileCode`): with a hook, asks it now
   * and throws 402 when it refuses; with the storage's ledger, returns the charge to store
   * with the messages (a refusal then comes from the insert: see {@link refused}).
   */
  async charge(profileCode: string, messages: readonly NewMessage[]): Promise<CreditCharge | undefined> {
    const principalId = messages[0]!.principalId;
    const lines = linesOf(messages);
    const units = unitsOf(lines);
    const { ledger, refunds } = this.deps.config;
    if (ledger === 'storage') return { principalId, units, refunds };
    const paid = await ledger.charge({ principalId, profileCode, units, messages: lines });
    if (paid !== true) throw new SmsError('INSUFFICIENT_CREDIT', `Insufficient credit: the request needs ${units} SMS units`);
    return undefined;
  }

  /** The 402 for an insert the ledger refused, or `null` for any other error. */
  refused(error: unknown): SmsError | null {
    return isInsufficientCredit(error) ? new SmsError('INSUFFICIENT_CREDIT', error.message) : null;
  }

  /** The request's messages are stored: announces the charge. */
  stored(profileCode: string, messages: readonly NewMessage[]): void {
    const lines = linesOf(messages);
    this.deps.emit('credit.charged', { principalId: messages[0]!.principalId, profileCode, units: unitsOf(lines), messages: lines });
  }

  /** The messages a hook was charged for could not be stored: gives their units back. */
  notStored(messages: readonly NewMessage[]): void {
    if (this.deps.config.ledger === 'storage') return;
    const lines = linesOf(messages);
    void this.#refund({ principalId: messages[0]!.principalId, units: unitsOf(lines), messages: lines, cause: 'not-stored' });
  }

  /**
   * A message changed state: when it ended owing a refund (lifecycle/credit.ts
   * `refundUnits`), the hook is asked for it; the storage's ledger has already given it, in
   * the step that ended the message. Either way it is announced.
   */
  transition(message: MessageRecord, previousState: MessageState): void {
    if (!isTerminal(message.state) || message.state === 'delivered') return;
    const units = refundUnits(previousState, message, this.deps.config.refunds);
    if (units === 0) return;
    const event: CreditRefundedEvent = {
      principalId: message.principalId,
      units,
      messages: [{ ref: message.ref, units }],
      cause: previousState === 'submitted' ? 'failed' : 'unsent',
    };
    if (this.deps.config.ledger === 'storage') this.deps.emit('credit.refunded', event);
    else void this.#refund(event);
  }

  /** Asks the hook for `refund`, then announces it; a failure is an `error` event. */
  async #refund(refund: CreditRefund): Promise<void> {
    const { ledger } = this.deps.config;
    if (ledger === 'storage') return;
    try {
      await ledger.refund(refund);
    } catch (error) {
      this.deps.emit('error', { error, source: 'credit' });
      return;
    }
    this.deps.emit('credit.refunded', refund);
  }
}
