/**
 * Applies carrier receipts to stored messages. A receipt whose carrier id is not known yet
 * (it overtook the recording of its own submission) is kept and tried again for a while
 * rather than dropped.
 *
 * So is, briefly, a receipt that looks like a duplicate: an SMSC that restarts may hand
 * out an id again, and a receipt for the new message that overtakes its recording matches
 * the old, finished one. Tried again a few seconds later, it finds the new message; a true
 * duplicate is then dropped quietly.
 */
import type { CarrierReceipt } from '../delivery/contract.js';
import { carrierIdSpellings } from '../delivery/carrier-ids.js';
import type { Emit } from '../events.js';
import type { InsertLease, Storage, Transition } from '../storage/contract.js';

/** What the receipt handler needs. */
export interface ReceiptHandlerDeps {
  storage: Storage;
  emit: Emit;
  now: () => number;
  /** How long an unmatched receipt is retried, ms. */
  waitMs: number;
  /** Called when a receipt ends a message. */
  onTransition: (transition: Transition) => void;
  /**
   * The lease under which a report a receipt creates is handed straight to this instance's
   * report sender, or `undefined` for none now (`PartReceipt.reportLease`).
   */
  reportLease?: (now: number) => InsertLease | undefined;
}

interface Parked {
  receipt: CarrierReceipt;
  giveUpAt: number;
  /** Until when a `duplicate` answer is tried again (an id reused by the carrier). */
  recheckDuplicateUntil: number;
}

/** How long a receipt that matched an already finished part is tried again, ms. */
const DUPLICATE_RECHECK_MS = 5_000;

/** First retry of an unmatched receipt, ms; doubles up to {@link MAX_RETRY_MS}. */
const FIRST_RETRY_MS = 50;
const MAX_RETRY_MS = 5_000;

/** Receives receipts from the delivery adapter and records them. */
export class ReceiptHandler {
  readonly #deps: ReceiptHandlerDeps;
  /** Parked receipts, by the timer that tries each again. */
  readonly #parked = new Map<NodeJS.Timeout, Parked>();
  /** Tries of parked receipts under way, which close() waits for. */
  readonly #retrying = new Set<Promise<void>>();
  #closed = false;

  constructor(deps: ReceiptHandlerDeps) {
    this.#deps = deps;
  }

  /** Records one receipt; resolves when it is stored (or parked to be tried again). */
  async receive(receipt: CarrierReceipt): Promise<void> {
    const now = this.#deps.now();
    const recheckDuplicateUntil = now + Math.min(DUPLICATE_RECHECK_MS, this.#deps.waitMs);
    await this.#apply({ receipt, giveUpAt: now + this.#deps.waitMs, recheckDuplicateUntil }, FIRST_RETRY_MS);
  }

  /**
   * Tries each parked receipt one last time and stops. The carrier was answered for them
   * already, so dropping one would lose it; the router closes this after the worker has
   * recorded every submission it made, so a receipt that was waiting for its own recording
   * finds it now. One still unmatched is dropped with an `error` event, as after `waitMs`.
   */
  async close(): Promise<void> {
    this.#closed = true;
    const parked = [...this.#parked];
    this.#parked.clear();
    for (const [timer] of parked) clearTimeout(timer);
    for (const [, entry] of parked) this.#retry(entry, 0);
    while (this.#retrying.size > 0) await Promise.all([...this.#retrying]);
  }

  /** Tries a parked receipt again; never rejects (a storage failure is an `error` event). */
  #retry(parked: Parked, retryMs: number): void {
    const attempt = this.#apply(parked, retryMs)
      .catch((error: unknown) => this.#deps.emit('error', { error, source: 'receipt' }))
      .finally(() => this.#retrying.delete(attempt));
    this.#retrying.add(attempt);
  }

  async #apply(parked: Parked, retryMs: number): Promise<void> {
    const { storage, emit, now } = this.#deps;
    const at = now();
    const reportLease = this.#deps.reportLease?.(at);
    const result = await storage.applyReceipt({
      carrierIds: carrierIdSpellings(parked.receipt.carrierId),
      outcome: parked.receipt.outcome,
      now: at,
      ...(reportLease === undefined ? {} : { reportLease }),
    });
    if (result.kind === 'terminal') this.#deps.onTransition(result.transition);
    if (result.kind === 'duplicate') {
      if (this.#closed || now() >= parked.recheckDuplicateUntil) return;
    } else if (result.kind !== 'unknown') {
      return;
    } else if (this.#closed || now() >= parked.giveUpAt) {
      emit('error', {
        error: new Error(`Receipt for unknown carrier id "${parked.receipt.carrierId}" dropped`),
        source: 'receipt',
      });
      return;
    }
    const timer = setTimeout(() => {
      this.#parked.delete(timer);
      this.#retry(parked, Math.min(retryMs * 2, MAX_RETRY_MS));
    }, retryMs);
    timer.unref();
    this.#parked.set(timer, parked);
  }
}
