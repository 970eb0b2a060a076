/**
 * The delivery contract: how a message part reaches the carrier and how the carrier's
 * receipts come back. The worker calls {@link DeliveryAdapter.submit} once per part and
 * learns outcomes through the {@link DeliveryHandlers} it passes to `start`.
 *
 * A carrier that reports over HTTP (delivery reports POSTed to a URL of ours) gets that URL
 * from {@link DeliveryAdapter.routes}: the router mounts the adapter's own handler at the
 * host's `carrierPath`, and the adapter turns each request into a handler call.
 *
 * What the contract does NOT promise: that `submit` is called once per part (submission
 * is at-least-once), that receipts arrive in order, or that a receipt arrives at all.
 */
import type { RequestHandler } from 'express';
import type { Encoding } from '../storage/contract.js';
import type { Outcome } from '../lifecycle/states.js';

/** One SMS part to hand to the carrier. */
export interface OutgoingPart {
  /** The message's ref; the same on every part and every retry. */
  ref: string;
  /** The principal that sent it. */
  principalId: string;
  /** The sender profile. */
  profileCode: string;
  /** Sender address: numeric short code or alphanumeric sender id. */
  sender: string;
  /** Destination, international digits without `+`. */
  recipient: string;
  /**
   * The destination's ISO 3166 alpha-2 country (`KE`), as the message record keeps it;
   * `null` when the number tells none, absent when the record does not say (read it from
   * `recipient` then, as `RoutedDelivery` does).
   */
  country?: string | null;
  /** The whole message text (adapters that split themselves use this). */
  text: string;
  /** This part's text: the slice of `text` that `splitSms` assigns to part `index`. */
  partText: string;
  /** 0-based part index. */
  index: number;
  /** Number of parts (`sms_count`). */
  count: number;
  /** 8-bit concatenation reference, the same for every part of the message and on retries. */
  concatRef: number;
  /** The encoding the text goes out in. */
  encoding: Encoding;
  /** The caller's `message_type`, passed on. */
  messageType: number;
  /** The caller's `req_type`, passed on. */
  reqType: number;
  /**
   * What is left of the message's validity period, whole seconds (at least 1), when it has
   * one: how long the carrier should go on trying to deliver it (SMPP `validity_period`).
   */
  validitySeconds?: number;
}

/** What the carrier said when it accepted a part. */
export interface SubmitAck {
  /** The carrier's id for the part, as the carrier wrote it. */
  carrierId: string;
  /** The connection that carried it (an SMPP bind's name, as in {@link ConnectionBound.bind}), when the adapter says. */
  bind?: string;
  /** The route that carried it (a `RoutedDelivery` route's name), when the adapter says. */
  route?: string;
}

/**
 * One carrier connection's state for an operator, as {@link DeliveryAdapter.status} reads
 * it at the moment it is asked: nothing in it is stored or shared between instances.
 */
export interface BindStatus {
  /** Its name, as in {@link ConnectionBound.bind}. */
  bind: string;
  /** The route it serves, when a `RoutedDelivery` reads it. */
  route?: string;
  /** `connecting`: never bound yet; `reconnecting`: lost, trying again; `closed`: the adapter closed. */
  state: 'bound' | 'connecting' | 'reconnecting' | 'closed';
  /** When it entered `state`, epoch ms. */
  since: number;
  /** Whether it submits (a receiver, or an SMPP receiver bind, does not). */
  submits: boolean;
  /** The most parts a second its adapter submits, over all its binds together; `null` when unpaced. */
  tpsLimit: number | null;
  /** Parts it sent a second, averaged over the last 10 s. */
  tpsInUse: number;
  /** How many submits may await their answer at once on it; `null` when it has no window. */
  window: number | null;
  /** Submits awaiting their answer on it now. */
  inFlight: number;
}

/** A carrier receipt for one part. */
export interface CarrierReceipt {
  /** The carrier id the receipt names, as the carrier wrote it. */
  carrierId: string;
  /** The part's outcome. */
  outcome: Outcome;
}

/** A mobile-originated message the carrier delivered to us (premium MO flow). */
export interface InboundMessage {
  /** The subscriber's number. */
  from: string;
  /** The short code or number it was sent to. */
  to: string;
  /** The text. */
  text: string;
  /** When it arrived, epoch ms. */
  receivedAt: number;
  /**
   * Where it sits in a long message, when it is one part of one (its `text` is the part's):
   * the router joins the parts, through the storage when it can, so the parts of one message
   * may reach different instances. Absent for a whole message.
   */
  part?: InboundPartPlace;
}

/** Where a part of a long MO message sits: a UDH concatenation element's fields, or the SAR TLVs'. */
export interface InboundPartPlace {
  /** The concatenation reference, the same on every part of one message. */
  ref: number;
  /** How many parts the message has (2 or more). */
  total: number;
  /** This part's 1-based number. */
  seq: number;
}

/**
 * A carrier connection came up: it can carry traffic. What an adapter passes to
 * {@link DeliveryHandlers.connection}.
 */
export interface ConnectionBound {
  /**
   * Which connection: an SMPP adapter names its binds `transmitter`, `receiver` or
   * `transceiver`, the simulator `simulator`. A small fixed set per adapter: it becomes a
   * metric label.
   */
  bind: string;
  /** It is up. */
  state: 'bound';
  /** The route it serves, when a `RoutedDelivery` passes it on (a configured route's name). */
  route?: string;
  /** True when it replaces one that was bound before and lost (a reconnect); false for the first. */
  reconnect: boolean;
}

/**
 * A carrier connection is down: it was lost, or an attempt to establish it failed. The
 * adapter keeps trying on its own. What an adapter passes to {@link DeliveryHandlers.connection}.
 */
export interface ConnectionUnbound {
  /** Which connection, as in {@link ConnectionBound.bind}. */
  bind: string;
  /** It is down. */
  state: 'unbound';
  /** The route it serves, as in {@link ConnectionBound.route}. */
  route?: string;
  /** Why. */
  error: unknown;
  /**
   * Failures in a row since it was last up (or since start), this one included: 1 is the
   * start of an outage, more are retries that failed during it.
   */
  attempt: number;
  /** When the adapter tries again, ms from now, if it knows. */
  retryInMs?: number;
}

/** A change of a carrier connection's state: up, or down (with why). */
export type ConnectionChange = ConnectionBound | ConnectionUnbound;

/**
 * A route of a `RoutedDelivery` became able to take traffic, or stopped being able to: what
 * the adapter passes to {@link DeliveryHandlers.route}.
 */
export interface RouteChange {
  /** The route (a configured route's name). */
  route: string;
  /** `up`: its carrier takes its messages; `down`: they go to its fallback, if one is up. */
  state: 'up' | 'down';
  /** Why it is down: every connection that submits is unbound, or the carrier throttled it past the bound. */
  reason?: 'unbound' | 'throttled';
  /** While down: the route its new messages go to instead, or `null` when no fallback is up. */
  via?: string | null;
}

/** Callbacks the worker gives the adapter. Each may be called at any time after `start`. */
export interface DeliveryHandlers {
  /**
   * A receipt arrived. Resolves once it is recorded in storage (or found to repeat one
   * recorded before, or given up on after `worker.receiptWaitMs`); only then may the
   * adapter acknowledge it to the carrier. It may take a few seconds: a receipt that
   * overtook the recording of its own submission is held until that recording lands.
   *
   * Rejects with {@link ReceiptNotYetMatched} when the receipt cannot be recorded yet (its
   * submission is still not recorded, or the router is closing). The adapter must then
   * answer so that the carrier sends the receipt again later (SMPP: a transient error such
   * as `ESME_RX_T_APPN`), and need not report it: it is expected, not a failure. Any other
   * rejection is a failure (storage down, say); answer it the same transient way.
   */
  receipt(receipt: CarrierReceipt): Promise<void>;
  /** A mobile-originated message arrived. */
  inbound(message: InboundMessage): Promise<void>;
  /**
   * Something went wrong that no request is waiting for: a receipt that cannot be read, a
   * dropped bind when `connection` is not given.
   */
  error(error: unknown): void;
  /**
   * A connection to the carrier came up or went down; optional for both sides. An adapter
   * that holds connections reports each change here when the handler is given (the router
   * always gives it, and reports a failure on to the `error` event itself), and otherwise
   * reports each failure through `error`. An adapter without connections never calls it,
   * or reports `bound` once at start.
   */
  connection?(change: ConnectionChange): void;
  /**
   * A route of a routing adapter went down or came back (optional for both sides); each
   * configured route is also reported `up` once at start. The router turns it into the
   * `carrier.route` event and the route metrics.
   */
  route?(change: RouteChange): void;
}

/** How a message reaches the carrier. */
export interface DeliveryAdapter {
  /** Connects and starts reporting receipts to `handlers`. Called once. */
  start(handlers: DeliveryHandlers): Promise<void>;
  /**
   * Submits one part. Resolves with the carrier id when the carrier accepted it; rejects
   * with a {@link DeliveryError} (`permanent` when retrying can never help), or any other
   * error, which counts as retryable. The worker calls it at most `worker.concurrency` times
   * at once per router, and for a message's parts one after another, in order.
   */
  submit(part: OutgoingPart): Promise<SubmitAck>;
  /** Stops: no more receipts are reported after it resolves; leaves no timer or socket. */
  close(): Promise<void>;
  /**
   * The most parts a second this adapter submits, when it paces itself (an SMPP bind's
   * `tps`). The worker then gives it only about a twentieth of a second of parts at once:
   * a part waiting in the adapter's own queue for its pace cannot be passed by a message
   * claimed later, while the parts waiting for the worker's slots go in fair order.
   */
  readonly submitsPerSecond?: number;
  /**
   * The longest a receipt can take after the carrier accepted a part, ms, for an adapter
   * whose receipts do not outlive this process (the simulator). The router then ends a
   * message still `submitted` this long after its last change `expired` (reason `unknown`),
   * when that is sooner than `worker.receiptTimeoutMs`: its receipt died with a crashed
   * process and is not coming. Leave it unset for a real carrier, which keeps its receipts
   * and delivers them after a reconnect. On storage shared by many instances, the shortest
   * timeout of any instance applies to every message.
   */
  readonly receiptDeadlineMs?: number;
  /**
   * The adapter's own HTTP routes, for a carrier that calls back over HTTP (delivery
   * reports, MO messages): usually an `express.Router()`. Optional. The router calls it once,
   * when it is created (before `start`), and mounts the answer at its `carrierPath` option
   * (default `<basePath>/carrier`), so a route `/receipts` of the adapter is
   * `POST /api/outbox/carrier/receipts` by default. The paths below it are the adapter's.
   *
   * The router checks no API key there and parses no body: the carrier is no API client, so
   * the adapter reads the body itself and proves the sender (a signature over the raw body,
   * say). What a handler call promises holds here too: answer a receipt's request only once
   * {@link DeliveryHandlers.receipt} resolved, and answer it so that the carrier sends it
   * again (a 5xx, say) when it rejects, or when it comes before `start`. An error passed to
   * `next` is answered as any other (a 500 in the router's JSON, reported to `error`).
   */
  routes?(): RequestHandler;
  /**
   * The name of the route a message whose first part is `part` would go on now (its own,
   * or the fallback that takes its messages while it is down), or `null` when no route
   * would take it (the send then ends it `rejected`). Optional, for an adapter over
   * several carriers (`RoutedDelivery`): the send preview asks it, and sends nothing.
   */
  routeFor?(part: OutgoingPart): Promise<string | null>;
  /**
   * Each connection's state, pace and window now, for the operator console; optional, read
   * only, cheap enough to call on every page view. Called only after `start`.
   */
  status?(): BindStatus[];
}

/**
 * Marks a {@link DeliveryError}. Each CommonJS entry of the build carries its own copy of
 * the class, so `instanceof` fails across entries; the global symbol does not.
 */
const DELIVERY_ERROR = Symbol.for('sms-outbox.DeliveryError');

/** A carrier refusal. `permanent` errors end the message; the others are retried. */
export class DeliveryError extends Error {
  /**
   * True for a DeliveryError from any copy of this package (an adapter bundled apart from
   * the router included); use it instead of `instanceof`.
   */
  static is(error: unknown): error is DeliveryError {
    return typeof error === 'object' && error !== null && (error as { [DELIVERY_ERROR]?: true })[DELIVERY_ERROR] === true;
  }

  readonly [DELIVERY_ERROR] = true;
  /** True when retrying can never succeed (invalid destination, say). */
  readonly permanent: boolean;
  /** For a permanent error: the terminal outcome the message ends in. */
  readonly outcome: Outcome | null;
  /** Ask the worker to wait at least this long before the next try (throttling). */
  readonly retryAfterMs: number | null;

  constructor(
    message: string,
    options: { permanent?: boolean; outcome?: Outcome; retryAfterMs?: number; cause?: unknown } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = 'DeliveryError';
    this.permanent = options.permanent ?? false;
    this.outcome = options.outcome ?? null;
    this.retryAfterMs = options.retryAfterMs ?? null;
  }
}

/**
 * Marks a {@link ReceiptNotYetMatched}, across copies of this package as for
 * {@link DeliveryError}.
 */
const RECEIPT_NOT_YET_MATCHED = Symbol.for('sms-outbox.ReceiptNotYetMatched');

/**
 * What {@link DeliveryHandlers.receipt} rejects with when a receipt cannot be recorded yet:
 * no stored part has its carrier id so far (the receipt overtook the recording of its own
 * submission by more than a few seconds), or the router is closing. Nothing was stored;
 * the adapter must refuse the receipt transiently so that the carrier sends it again (to
 * this instance later, or to another one), never acknowledge it.
 */
export class ReceiptNotYetMatched extends Error {
  /**
   * True for a ReceiptNotYetMatched from any copy of this package; use it instead of
   * `instanceof`.
   */
  static is(error: unknown): error is ReceiptNotYetMatched {
    return (
      typeof error === 'object' &&
      error !== null &&
      (error as { [RECEIPT_NOT_YET_MATCHED]?: true })[RECEIPT_NOT_YET_MATCHED] === true
    );
  }

  readonly [RECEIPT_NOT_YET_MATCHED] = true;
  /** The carrier id the receipt names, as the carrier wrote it. */
  readonly carrierId: string;

  constructor(carrierId: string, message = `Receipt for carrier id "${carrierId}" cannot be recorded yet; refuse it so the carrier re-sends it`) {
    super(message);
    this.name = 'ReceiptNotYetMatched';
    this.carrierId = carrierId;
  }
}
