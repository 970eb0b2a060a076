/**
 * SimulatorDelivery: an in-process fake carrier for development, demos and tests. It
 * accepts parts, answers with carrier ids, and reports a receipt per part after a delay,
 * with a configurable mix of outcomes, a submit-rate cap, duplicate receipts and mixed
 * id spellings, so a host can see every path of the lifecycle without a real carrier.
 *
 * Deterministic for a given `seed` and order of `submit` calls: every random choice is
 * drawn from a seeded PRNG when `submit` is called. Carrier ids are the exception (see
 * {@link SimulatorDelivery.submit}).
 *
 * Its receipts live in this process only, where a real carrier keeps them across our
 * restarts. So `close()` reports every receipt it still holds before it stops, and
 * {@link SimulatorDelivery.receiptDeadlineMs} tells the router how long a receipt can
 * take: after a crash, the messages whose receipts died with the process end `expired`
 * (reason `unknown`) once that has passed, not after the 48 h a real carrier may take.
 */
import { outcome, type Outcome } from '../lifecycle/states.js';
import {
  DeliveryError,
  ReceiptNotYetMatched,
  type BindStatus,
  type CarrierReceipt,
  type DeliveryAdapter,
  type DeliveryHandlers,
  type OutgoingPart,
  type SubmitAck,
} from './contract.js';
import { mulberry32 } from '../util/mulberry32.js';
import { RateMeter } from './rate-meter.js';
import {
  resolveSimulatorOptions,
  SIMULATED_OUTCOMES,
  type SimulatedOutcome,
  type SimulatorConfig,
  type SimulatorOptions,
} from './simulator-options.js';

export { SIMULATED_OUTCOMES, type SimulatedDelay, type SimulatedOutcome, type SimulatorOptions } from './simulator-options.js';
/** The outcomes a receipt reports; the other simulated outcomes never reach a receipt. */
const RECEIPT_OUTCOMES: Partial<Record<SimulatedOutcome, Outcome>> = {
  delivered: outcome('delivered', 'delivered_to_terminal'),
  absent_subscriber: outcome('undelivered', 'absent_subscriber'),
  delivery_impossible: outcome('undelivered', 'delivery_impossible'),
  expired: outcome('expired', 'expired'),
  rejected: outcome('rejected', 'rejected'),
};

/**
 * Delay before a refused receipt is sent again, ms. Short, as a demo should show a receipt
 * that overtook its recording land soon; real carriers wait seconds to minutes.
 */
const RESEND_DELAY_MS = 1_000;

/**
 * Most re-sends of one refused receipt: enough to outlast the router's default
 * `worker.receiptWaitMs` (60 s) with each delivery held up to 5 s, so the router, not the
 * simulated carrier, decides when an unmatched receipt is given up; bounded, as a real
 * carrier's retries are.
 */
const MAX_RESENDS = 20;

/** A submit waiting for its turn or its response time; `close()` rejects it. */
interface Waiter {
  timer: NodeJS.Timeout | undefined;
  reject: (error: Error) => void;
}

/** A receipt waiting for its time (or for its re-send); `close()` reports it at once. */
interface HeldReceipt {
  receipt: CarrierReceipt;
  /** Re-sends so far. */
  resends: number;
  /** Report it a second time once the first is recorded (`duplicateReceipts`). */
  duplicate: boolean;
}

/**
 * The simulated carrier. Implements {@link DeliveryAdapter}: call `start` once, then
 * `submit` each part; receipts come through the handlers, one per accepted part (and
 * sometimes two, with `duplicateReceipts`). A receipt the handler refuses (rejects) is sent
 * again a second later, up to 20 times, as a carrier re-sends an unacknowledged one. Its
 * timers never keep the process alive. `close()` reports at once every receipt still
 * waiting for its time (or its re-send), and after it resolves the simulator reports
 * nothing more and refuses submits.
 */
export class SimulatorDelivery implements DeliveryAdapter {
  /**
   * The latest parts the carrier accepted (at most `keepSubmitted`, default 1000), in order
   * of acceptance; refused ones are not here.
   */
  readonly submitted: OutgoingPart[] = [];

  readonly #config: SimulatorConfig;
  readonly #random: () => number;
  readonly #held = new Map<NodeJS.Timeout, HeldReceipt>();
  readonly #waiters = new Set<Waiter>();
  readonly #inFlight = new Set<Promise<void>>();
  #handlers: DeliveryHandlers | null = null;
  /** Set when `close()` begins: no submit, no new timer; held receipts are being reported. */
  #closing: Promise<void> | null = null;
  /** Set when `close()` is done: nothing is reported any more. */
  #closed = false;
  #nextSlotAt = 0;
  #nextId: number;
  /** When `start` bound its one connection, epoch ms (until then, when it was made). */
  #since = Date.now();
  readonly #accepted = new RateMeter();

  /** Checks `options` (throwing a TypeError with a hint on a bad one) and resolves them. */
  constructor(options: SimulatorOptions = {}) {
    this.#config = resolveSimulatorOptions(options);
    this.#random = mulberry32(this.#config.seed);
    // Ids are 12 hex digits starting with A, from a random block of 2^20, so that they
    // always hold a letter (a hex id is never also a decimal one, which keeps
    // `decimalReceiptIds` matching unambiguous) and two simulators, even with one seed,
    // practically never hand out the same id.
    this.#nextId = 0xa00000000000 + Math.floor(Math.random() * 0x1000000) * 0x100000;
  }

  /**
   * Reports receipts to `handlers` from now on, and its one connection (`simulator`) as
   * bound: it never goes down. Call once, before `submit`.
   */
  async start(handlers: DeliveryHandlers): Promise<void> {
    if (this.#closing) throw new Error('SimulatorDelivery: start() after close()');
    if (this.#handlers) throw new Error('SimulatorDelivery: start() called twice');
    this.#handlers = handlers;
    this.#since = Date.now();
    handlers.connection?.({ bind: 'simulator', state: 'bound', reconnect: false });
  }

  /**
   * Submits one part. Waits for its turn under `tps` and for `submitLatencyMs`, then
   * resolves with a fresh carrier id (upper-case hex, unique across simulators but not
   * reproducible by `seed`) and schedules the part's receipt, or rejects with a
   * {@link DeliveryError} for the refusing outcomes. Rejects (retryable) after `close()`.
   */
  async submit(part: OutgoingPart): Promise<SubmitAck> {
    if (this.#closing) throw closedError();
    if (!this.#handlers) throw new Error('SimulatorDelivery: submit() before start()');
    // Every draw happens now, in call order, so a seed gives the same choices however the
    // waits below interleave.
    const kind = this.#drawOutcome();
    const latencyMs = this.#drawDelay(this.#config.latency);
    const duplicate = this.#random() < this.#config.duplicateReceipts;
    const submitDelayMs = this.#drawDelay(this.#config.submitLatency);
    const turn = this.#takeTurn();
    const due = turn + submitDelayMs;
    if (due > performance.now()) await this.#waitUntil(due);
    if (this.#closing) throw closedError();

    switch (kind) {
      case 'throttled':
        throw new DeliveryError('Simulated carrier: throttled, try again later', {
          retryAfterMs: this.#config.retryAfterMs,
        });
      case 'sender_name_blacklisted':
      case 'invalid_source_address':
        throw new DeliveryError(`Simulated carrier: rejected (${kind})`, {
          permanent: true,
          outcome: outcome('rejected', kind),
        });
      default: {
        const carrierId = (this.#nextId++).toString(16).toUpperCase();
        this.submitted.push(part);
        this.#accepted.add();
        if (this.submitted.length > this.#config.keepSubmitted) this.submitted.shift();
        const receiptOutcome = RECEIPT_OUTCOMES[kind] ?? outcome('delivered', 'delivered_to_terminal');
        const receiptId = this.#config.decimalReceiptIds ? BigInt(`0x${carrierId}`).toString(10) : carrierId;
        this.#hold({ receipt: { carrierId: receiptId, outcome: receiptOutcome }, resends: 0, duplicate }, latencyMs);
        return { carrierId, bind: 'simulator' };
      }
    }
  }

  /**
   * Its one connection, `simulator`: bound from `start` to `close`, paced by `tps`, with the
   * parts it accepted a second; it has no window (every submit is taken at once).
   */
  status(): BindStatus[] {
    const { intervalMs } = this.#config;
    return [{
      bind: 'simulator', state: this.#closing ? 'closed' : 'bound', since: this.#since, submits: true,
      tpsLimit: intervalMs === 0 ? null : 1000 / intervalMs, tpsInUse: this.#accepted.perSecond(), window: null, inFlight: this.#waiters.size,
    }];
  }

  /**
   * Stops: rejects submits still waiting (retryable, so the router hands their messages
   * back), reports at once every receipt still waiting for its time or its re-send, and
   * resolves once each is recorded or refused. A receipt refused now is not sent again: it
   * is lost, as after a crash, and {@link receiptDeadlineMs} ends its message. Call it
   * while the router's receipt handler and storage are still open (the router does).
   * Idempotent.
   */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    for (const waiter of this.#waiters) {
      clearTimeout(waiter.timer);
      waiter.reject(closedError());
    }
    this.#waiters.clear();
    const held = [...this.#held.values()];
    for (const timer of this.#held.keys()) clearTimeout(timer);
    this.#held.clear();
    // A receipt reported here is not re-sent: MAX_RESENDS as its count.
    for (const { receipt } of held) void this.#report(receipt, MAX_RESENDS);
    // A duplicate is reported only once its first is recorded: wait for those too.
    while (this.#inFlight.size > 0) await Promise.allSettled([...this.#inFlight]);
    this.#closed = true;
  }

  /**
   * The longest a receipt takes after an accepted submit, ms: `receiptDeadlineMs`, by
   * default the longest `latencyMs` plus a minute for a receipt refused and sent again.
   * The router ends a message still `submitted` after this long (see
   * {@link DeliveryAdapter.receiptDeadlineMs}), which only happens when its receipt died
   * with a crashed process.
   */
  get receiptDeadlineMs(): number {
    return this.#config.receiptDeadlineMs;
  }

  /**
   * Delivers a mobile-originated message, as a subscriber's reply reaching the carrier would:
   * `from` the subscriber's number, `to` the short code. Resolves once the router has stored
   * it (when a real carrier's delivery would be answered); rejects when the router refused
   * it (a carrier would deliver it again later), or before `start` and after `close`.
   */
  async simulateInbound(message: { from: string; to: string; text: string }): Promise<void> {
    const handlers = this.#handlers;
    if (this.#closing || !handlers) throw new Error('SimulatorDelivery: simulateInbound() needs a started, open simulator');
    const delivered = handlers.inbound({ from: message.from, to: message.to, text: message.text, receivedAt: Date.now() });
    const held = delivered.then(() => undefined, () => undefined);
    this.#inFlight.add(held);
    void held.then(() => this.#inFlight.delete(held));
    await delivered;
  }

  /** Receipts scheduled and not yet reported, re-sends of refused ones included (for tests and diagnostics). */
  get pendingReceipts(): number {
    return this.#held.size;
  }

  #drawOutcome(): SimulatedOutcome {
    const target = this.#random() * this.#config.totalWeight;
    const { cumulative } = this.#config;
    for (let i = 0; i < cumulative.length; i++) {
      if (target < cumulative[i]!) return SIMULATED_OUTCOMES[i]!;
    }
    // Only reachable through rounding at the top end: the last outcome with a weight.
    for (let i = cumulative.length - 1; i > 0; i--) {
      if (cumulative[i]! > cumulative[i - 1]!) return SIMULATED_OUTCOMES[i]!;
    }
    return SIMULATED_OUTCOMES[0]!;
  }

  #drawDelay([min, max]: readonly [number, number]): number {
    // Drawn even when fixed, so the PRNG sequence does not depend on the options.
    const r = this.#random();
    return Math.round(min + r * (max - min));
  }

  /** Reserves the next submit turn under `tps` and returns when it starts (performance.now ms). */
  #takeTurn(): number {
    const now = performance.now();
    if (this.#config.intervalMs === 0) return now;
    const turn = Math.max(now, this.#nextSlotAt);
    this.#nextSlotAt = turn + this.#config.intervalMs;
    return turn;
  }

  #waitUntil(due: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = { timer: undefined, reject };
      const check = () => {
        const left = due - performance.now();
        if (left <= 0) {
          this.#waiters.delete(waiter);
          resolve();
          return;
        }
        // Timers may fire a little early against performance.now(); re-arm until due.
        waiter.timer = setTimeout(check, Math.ceil(left));
        waiter.timer.unref();
      };
      this.#waiters.add(waiter);
      check();
    });
  }

  /** Reports `held` after `delayMs`, unless `close()` reports it first. */
  #hold(held: HeldReceipt, delayMs: number): void {
    if (this.#closing) return;
    const timer = setTimeout(() => {
      this.#held.delete(timer);
      const first = this.#report(held.receipt, held.resends);
      // The duplicate follows once the first is recorded, as a carrier resending an
      // unacknowledged receipt would.
      if (held.duplicate) void first.then(() => this.#report(held.receipt, 0));
    }, delayMs);
    timer.unref();
    this.#held.set(timer, held);
  }

  /**
   * Reports a receipt; resolves once the handler accepted it, or once it was refused and
   * its re-send is scheduled. Like a carrier, it sends a refused receipt again after
   * {@link RESEND_DELAY_MS}, at most {@link MAX_RESENDS} times; a refusal that is not
   * {@link ReceiptNotYetMatched} is also reported through `handlers.error`.
   */
  #report(receipt: CarrierReceipt, resends: number): Promise<void> {
    const handlers = this.#handlers;
    if (this.#closed || !handlers) return Promise.resolve();
    const reported = (async () => {
      try {
        await handlers.receipt({ ...receipt });
      } catch (error) {
        if (!ReceiptNotYetMatched.is(error)) handlers.error(error);
        if (resends < MAX_RESENDS) this.#hold({ receipt, resends: resends + 1, duplicate: false }, RESEND_DELAY_MS);
      }
    })();
    this.#inFlight.add(reported);
    void reported.then(() => this.#inFlight.delete(reported));
    return reported;
  }
}

function closedError(): DeliveryError {
  return new DeliveryError('Simulated carrier: closed');
}
