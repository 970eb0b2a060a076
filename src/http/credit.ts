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
import { OptionError, SmsError } from '../errors.js';
import { isTerminal, type MessageState } from '../lifecycle/states.js';
import type { CreditLine, CreditRefundCause, CreditRefundedEvent } from '../observe/credit-events.js';
import type { Emit } from '../observe/events.js';
import { isInsufficientCredit, refundUnits, type CreditCharge, type RefundPolicy } from '../storage/credit-record.js';
import type { MessageRecord, NewMessage, Storage } from '../storage/contract.js';
import { assertKnownKeys } from '../util/known-keys.js';

export type { RefundPolicy };

/** A request's charge, as the host's {@link CreditHook} is asked for it. */
export interface CreditRequest {
  /** Whose credit pays (the API key's principal). */
  principalId: string;
  /** The request's profile. */
  profileCode: string;
  /** The units asked for: the sum of `messages`' units. */
  units: number;
  /** Each message, in request order, with its `message_ref`: the key a charge is idempotent by. */
  messages: CreditLine[];
}

/** Units given back, as the host's {@link CreditHook} is told. */
export interface CreditRefund {
  /** Whose credit gets them. */
  principalId: string;
  /** The units: the sum of `messages`' units. */
  units: number;
  /** The messages they were taken for, by `message_ref`: the key a refund is idempotent by. */
  messages: CreditLine[];
  /** Why (see `CreditRefundCause`). */
  cause: CreditRefundCause;
}

/**
 * A host's own ledger (balances kept elsewhere: a billing service, an account database).
 * Both calls must be idempotent by message ref: a retry of a failed call (or of a request)
 * names the same refs, and a ref is never charged or refunded twice by the router.
 */
export interface CreditHook {
  /** Takes `request.units`; resolves `false` to refuse (402, nothing stored). A throw is a 500. */
  charge(request: CreditRequest): boolean | Promise<boolean>;
  /** Gives units back; a throw is reported as an `error` event (source `credit`) and not retried. */
  refund(refund: CreditRefund): void | Promise<void>;
}

/** The `credit` option. */
export interface CreditOptions {
  /**
   * Where balances live: `'storage'` for the ledger the storage keeps (the bundled storages
   * have one; balances are topped up with `router.credit.topUp`), or the host's
   * {@link CreditHook}. Required.
   */
  ledger: 'storage' | CreditHook;
  /**
   * Which ended messages give their units back: `'unsent'` (those that never reached the
   * carrier: refused by its route, opted out, validity elapsed, cancelled, out of attempts),
   * or `'unsent-and-failed'` (those, and every message the carrier took that ends other than
   * delivered). Default `'unsent'`.
   */
  refunds?: RefundPolicy;
}

/** The resolved `credit` option. */
export interface CreditConfig {
  ledger: 'storage' | CreditHook;
  refunds: RefundPolicy;
}

/** The balances of the storage's ledger, for the host (`router.credit`). */
export interface CreditAccounts {
  /** Adds `units` (a positive integer) to `principalId`'s balance; resolves with the new balance. */
  topUp(principalId: string, units: number): Promise<number>;
  /** `principalId`'s balance in SMS units (0 when never topped up). */
  balance(principalId: string): Promise<number>;
}

const REFUND_POLICIES: readonly RefundPolicy[] = ['unsent', 'unsent-and-failed'];

/** Checks the `credit` option against `storage`; `null` when it is not given. */
export function resolveCreditOptions(given: CreditOptions | undefined, storage: Storage): CreditConfig | null {
  if (given === undefined) return null;
  const where = 'createSmsRouter: `credit`';
  if (typeof given !== 'object' || given === null) throw new OptionError(`${where} must be an object { ledger, refunds? }`);
  assertKnownKeys('credit', given, ['ledger', 'refunds']);
  const { ledger, refunds = 'unsent' } = given;
  if (!REFUND_POLICIES.includes(refunds)) throw new OptionError(`${where}.refunds must be 'unsent' or 'unsent-and-failed'`);
  if (ledger === 'storage') {
    if (typeof storage.topUpCredit !== 'function' || typeof storage.creditBalance !== 'function') {
      throw new OptionError(`${where}.ledger is 'storage', but the storage has no credit ledger (topUpCredit, creditBalance)`, 'INVALID_ADAPTER');
    }
  } else if (typeof ledger !== 'object' || ledger === null || typeof ledger.charge !== 'function' || typeof ledger.refund !== 'function') {
    throw new OptionError(`${where}.ledger must be 'storage' or an object with charge() and refund()`, 'INVALID_ADAPTER');
  }
  return { ledger, refunds };
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
   * A message changed state: when it ended owing a refund (storage/credit-record.ts
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
