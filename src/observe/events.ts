/**
 * The typed events (README.md#events), and the emitter that keeps a throwing listener from
 * breaking a request or a worker.
 */
import { EventEmitter } from 'eventemitter3';
import type { MessageState } from '../lifecycle/states.js';
import type { EndpointName } from '../endpoints.js';
import type { InboundRecord, MessageRecord, NewMessage } from '../storage/contract.js';
import type { ConnectionChange, InboundMessage, RouteChange, SubmitAck } from '../delivery/contract.js';
import { eventErrorCode, type EventErrorCode } from '../errors.js';
import type { CreditChargedEvent, CreditRefundedEvent } from './credit-events.js';
import type { CallbackEndpointPausedEvent, CallbackEndpointResumedEvent } from './callback-events.js';
import type { KeyExpiredEvent } from './key-events.js';
import type { SpendCapWarningEvent } from './spend-cap-events.js';
import type { SubscriberErasedEvent } from './erase-events.js';
import { assertEventName } from './event-names.js';

export { SMS_EVENT_NAMES } from './event-names.js';
export type { CreditChargedEvent, CreditLine, CreditRefundCause, CreditRefundedEvent } from './credit-events.js';
export type { CallbackEndpointPausedEvent, CallbackEndpointResumedEvent } from './callback-events.js';
export type { KeyExpiredEvent } from './key-events.js';
export type { SpendCapWarningEvent } from './spend-cap-events.js';
export type { ErasedKind, SubscriberErasedEvent } from './erase-events.js';

/** Payload of `message.accepted`. */
export interface MessageAcceptedEvent {
  /** The stored message (state `queued`). */
  message: NewMessage;
  /** The host's id of the request (`req.id`, as pino-http sets it), when it has one. */
  requestId?: RequestId;
}

/** A host's request id: what pino-http (or another middleware) put in `req.id`. */
export type RequestId = string | number;

/** Payload of `message.submitted`: every part was accepted by the carrier; `bind` and `route` took its last part, when the adapter says (`SubmitAck`). */
export interface MessageSubmittedEvent extends Pick<SubmitAck, 'bind' | 'route'> {
  /** The message, now `submitted`. */
  message: MessageRecord;
}

/** Payload of `message.status`: one transition of the lifecycle. */
export interface MessageStatusEvent {
  /** The message after the transition. */
  message: MessageRecord;
  /** The state before it. */
  previousState: MessageState;
}

/** Payload of `message.retrying`: a retryable carrier error; the message stays queued. */
export interface MessageRetryingEvent {
  /** The message's ref. */
  ref: string;
  /** Submission attempts made so far, this one included. */
  attempt: number;
  /** When the next attempt is due, epoch ms. */
  nextAttemptAt: number;
  /** The carrier error. */
  error: unknown;
}

/** Shared fields of the `dlr.*` events. */
export interface DlrEvent {
  /** The report's `uid` (also its `webhook-id`). */
  uid: string;
  /** The message it reports on, its `callback` as this attempt left it (as storage holds it now). */
  message: MessageRecord;
  /** The URL it was posted to. */
  url: string;
  /** 1-based attempt number. */
  attempt: number;
  /** HTTP status answered, if any. */
  statusCode: number | null;
  /** How long the attempt took, ms. */
  durationMs: number;
}

/** Payload of `dlr.retrying`. */
export interface DlrRetryingEvent extends DlrEvent {
  /** Why it failed this time. */
  error: string | null;
  /** When the next attempt is due, epoch ms. */
  nextAttemptAt: number;
}

/** Payload of `dlr.failed`: the report was given up on. */
export interface DlrFailedEvent extends DlrEvent {
  /** Why the last attempt failed. */
  error: string | null;
}

/** Shared fields of the `inbound.*` events: one attempt of an inbound message's webhook. */
export interface InboundWebhookEvent {
  /** The webhook's `uid` (also its `webhook-id`). */
  uid: string;
  /** The inbound message it forwards, its `callback` as this attempt left it (as storage holds it now). */
  inbound: InboundRecord;
  /** The URL it was posted to (the customer's inbound URL). */
  url: string;
  /** 1-based attempt number. */
  attempt: number;
  /** HTTP status answered, if any. */
  statusCode: number | null;
  /** How long the attempt took, ms. */
  durationMs: number;
}

/** Payload of `inbound.retrying`. */
export interface InboundRetryingEvent extends InboundWebhookEvent {
  /** Why it failed this time. */
  error: string | null;
  /** When the next attempt is due, epoch ms. */
  nextAttemptAt: number;
}

/** Payload of `inbound.failed`: the webhook was given up on. */
export interface InboundFailedEvent extends InboundWebhookEvent {
  /** Why the last attempt failed. */
  error: string | null;
}

/** Payload of `subscriber.opted_out` and `subscriber.opted_in`: a number's opt-out of a short code changed, by a keyword or `router.optOuts`. */
export interface SubscriberOptEvent {
  /** The short code. */
  shortCode: string;
  /** The subscriber's number. */
  number: string;
  /** `keyword`: the subscriber sent STOP or START (then `inboundRef` names the message); `api`: `router.optOuts`. */
  source: 'keyword' | 'api';
  /** The inbound message that carried the keyword, for `source: 'keyword'`. */
  inboundRef?: string;
  /** When, epoch ms. */
  at: number;
}

/** Payload of `request.rejected`: a request refused by the registry (a 4xx, or the 503 of a full backlog). */
export interface RequestRejectedEvent {
  /** HTTP status sent. */
  status: number;
  /** The `details` sent. */
  details: string;
  /** Which endpoint, if known. */
  endpoint: EndpointName | null;
  /**
   * The key's principal, once the key was verified: also for a refusal of that key
   * (disabled, expired, outside its `allowedIps` or its scopes).
   */
  principalId: string | null;
  /** The client's address as Express sees it (`req.ip`). */
  ip: string | undefined;
  /** The host's id of the request (`req.id`, as pino-http sets it), when it has one. */
  requestId?: RequestId;
}

/** Where an `error` happened. */
export type ErrorSource = 'request' | 'worker' | 'receipt' | 'dlr' | 'listener' | 'delivery' | 'storage' | 'credit';

/** Payload of `error`: something failed that no caller was told the details of. */
export interface ErrorEvent {
  /** The error, as thrown (a storage driver's error keeps its class and fields). */
  error: unknown;
  /** Where it happened: `request`, `worker`, `receipt`, `dlr`, `listener`, `delivery`, `storage`, `credit`. */
  source: ErrorSource;
  /**
   * A stable code to match (the `EVENT_ERRORS` registry): the code of an error the router
   * raised itself (`EventError`), or else its source's.
   */
  code: EventErrorCode;
  /** The message concerned, if one. */
  ref?: string;
  /** For a 500: the host's id of the request (`req.id`), when it has one. */
  requestId?: RequestId;
  /**
   * For a carrier connection that failed: which one (the same failure is also a
   * `carrier.connection` event, state `unbound`).
   */
  bind?: string;
  /** For a carrier connection that failed under a `RoutedDelivery`: the route it serves. */
  route?: string;
}

/** What the router's parts pass to emit an `error`: the code is filled in from the error or the source. */
export type ErrorEventInput = Omit<ErrorEvent, 'code'> & { code?: EventErrorCode };

/** The code of an `error` event whose error carries none of ours. */
const SOURCE_CODES: Record<ErrorSource, EventErrorCode> = {
  request: 'REQUEST_FAILED',
  worker: 'STORAGE_FAILED',
  receipt: 'RECEIPT_FAILED',
  dlr: 'REPORT_FAILED',
  listener: 'LISTENER_FAILED',
  delivery: 'CARRIER_FAILED',
  storage: 'STORAGE_FAILED',
  credit: 'CREDIT_REFUND_FAILED',
};

/** The `ErrorEvent` of `input`, its code filled in. */
function withCode(input: ErrorEventInput): ErrorEvent {
  if (input.code !== undefined) return input as ErrorEvent;
  return { ...input, code: eventErrorCode(input.error) ?? SOURCE_CODES[input.source] };
}

/** Payload of `queue.depth`: the queued messages (accepted, not yet submitted), sampled every few seconds. */
export interface QueueDepthEvent {
  /** Queued transactional messages. */
  transactional: number;
  /** Queued bulk messages. */
  bulk: number;
  /** When the oldest queued message was accepted (epoch ms), or `null` when none is. */
  oldestAcceptedAt: number | null;
  /** When the sample was taken, epoch ms. */
  at: number;
}

/**
 * Payload of `carrier.connection`: a carrier connection (an SMPP bind) came up or went
 * down, as the delivery adapter reports it. `bound` says whether it replaces a lost one
 * (`reconnect`); `unbound` carries the `error` and the `attempt` (1 starts an outage, more
 * are retries that failed).
 */
export type CarrierConnectionEvent = ConnectionChange;

/**
 * Payload of `carrier.route`: a route of a `RoutedDelivery` went down (`reason`, and `via`:
 * where its messages go meanwhile) or came back up; each route is reported `up` at start.
 */
export type CarrierRouteEvent = RouteChange;

/** Every event the router emits, with its payload. */
export interface SmsEvents {
  /** A message was stored and acknowledged (one event per message). Bill from this. */
  'message.accepted': (event: MessageAcceptedEvent) => void;
  /** Every part of a message was accepted by the carrier. */
  'message.submitted': (event: MessageSubmittedEvent) => void;
  /** A message changed state (every transition, terminal ones included). */
  'message.status': (event: MessageStatusEvent) => void;
  /** A submission failed in a way worth retrying; the message will be tried again. */
  'message.retrying': (event: MessageRetryingEvent) => void;
  /** A request's SMS units were taken from its principal's credit (the `credit` option), its messages stored. */
  'credit.charged': (event: CreditChargedEvent) => void;
  /** SMS units were given back: a message ended unsent (or failed, by the refund policy), or was not stored. */
  'credit.refunded': (event: CreditRefundedEvent) => void;
  /** A subscriber sent a message to one of our numbers (premium MO flow). */
  'message.inbound': (event: InboundMessage) => void;
  /** The queue, sampled every 5 s while someone listens (the `metrics` option does), from a storage with `countQueued`. */
  'queue.depth': (event: QueueDepthEvent) => void;
  /** A delivery report was answered with a 2xx. */
  'dlr.sent': (event: DlrEvent) => void;
  /** A delivery report attempt failed and will be retried. */
  'dlr.retrying': (event: DlrRetryingEvent) => void;
  /** A delivery report was given up on (schedule exhausted, or 410 Gone). */
  'dlr.failed': (event: DlrFailedEvent) => void;
  /** A callback URL failed for `dlr.pauseAfterMs` on this instance: its reports are no longer posted (docs/callbacks.md). */
  'callback.endpoint_paused': (event: CallbackEndpointPausedEvent) => void;
  /** A paused callback URL is tried again: after a replay of its principal's reports, or `router.callbacks.resume`. */
  'callback.endpoint_resumed': (event: CallbackEndpointResumedEvent) => void;
  /** An inbound message's webhook was answered with a 2xx. */
  'inbound.sent': (event: InboundWebhookEvent) => void;
  /** An inbound message's webhook attempt failed and will be retried. */
  'inbound.retrying': (event: InboundRetryingEvent) => void;
  /** An inbound message's webhook was given up on (schedule exhausted, or 410 Gone). */
  'inbound.failed': (event: InboundFailedEvent) => void;
  /** A number opted out of a short code (it sent a stop keyword, or `router.optOuts.add`). */
  'subscriber.opted_out': (event: SubscriberOptEvent) => void;
  /** A number opted back in to a short code (a start keyword, or `router.optOuts.remove`). */
  'subscriber.opted_in': (event: SubscriberOptEvent) => void;
  /**
   * A carrier connection (an SMPP bind; the simulator's at start) came up or went down.
   * Each failed reconnect is reported too, with its `attempt`.
   */
  'carrier.connection': (event: CarrierConnectionEvent) => void;
  /** A route of a `RoutedDelivery` went down (its messages go to `via`) or came back. */
  'carrier.route': (event: CarrierRouteEvent) => void;
  /** A request was refused: a 4xx, or the 503 of a full backlog. */
  'request.rejected': (event: RequestRejectedEvent) => void;
  /** A request came with an expired key (and was refused 401 `KEY_EXPIRED`). */
  'key.expired': (event: KeyExpiredEvent) => void;
  /** A principal's units of the day or the month reached 80% of its spend cap (`dailyUnits`, `monthlyUnits`). */
  'spend_cap.warning': (event: SpendCapWarningEvent) => void;
  /** One subscriber's stored numbers and texts were erased (`sms.erase`): the summary, the number only as its hash. */
  'subscriber.erased': (event: SubscriberErasedEvent) => void;
  /** An unexpected error; requests answered 500 and worker failures end up here. */
  error: (event: ErrorEvent) => void;
}

/** The event names. */
export type SmsEventName = keyof SmsEvents;

/** Emits one event; what the router's parts are given instead of the emitter itself. */
export type Emit = <K extends SmsEventName>(name: K, payload: K extends 'error' ? ErrorEventInput : Parameters<SmsEvents[K]>[0]) => void;

type Listener = (payload: never) => void;
type ListenerOf<K extends SmsEventName> = EventEmitter.EventListener<SmsEvents, K>;

/** Options of {@link SmsEventEmitter}. */
export interface SmsEventEmitterOptions {
  /**
   * Called with each `error` event that no listener heard (the router writes it to stderr).
   * Decided at each emit, so a listener added later silences it from then on.
   */
  unheardError?: (event: ErrorEvent) => void;
}

/**
 * The router's event emitter: eventemitter3 with every listener guarded, so a listener
 * that throws is reported through `error` (source `listener`) and the listeners after it
 * still run. `off` takes the function that was passed to `on` or `once`, as usual. A name
 * that is not an event is refused with a TypeError (and the nearest name, if one is near).
 */
export class SmsEventEmitter extends EventEmitter<SmsEvents> {
  /** Original listener -> the guarded wrappers registered for it, per event. */
  readonly #wrappers = new Map<string, Map<Listener, Listener[]>>();
  readonly #unheardError: ((event: ErrorEvent) => void) | null;

  constructor(options: SmsEventEmitterOptions = {}) {
    super();
    this.#unheardError = options.unheardError ?? null;
  }

  /**
   * Emits as eventemitter3 does; an `error` event with no listener goes to the
   * `unheardError` option, so a failure is never silent by default.
   */
  override emit<K extends SmsEventName>(name: K, ...args: EventEmitter.EventArgs<SmsEvents, K>): boolean {
    if (name === 'error') args[0] = withCode(args[0] as ErrorEventInput) as never;
    const heard = super.emit(name, ...args);
    if (!heard && name === 'error' && this.#unheardError !== null) {
      try {
        this.#unheardError(args[0] as ErrorEvent);
      } catch {
        // Reporting must never break the request or worker that failed (stderr closed, say).
      }
    }
    return heard;
  }

  override on<K extends SmsEventName>(name: K, listener: ListenerOf<K>, context?: unknown): this {
    assertEventName('on', name);
    return super.on(name, this.#guard(name, listener as Listener) as ListenerOf<K>, context);
  }

  override addListener<K extends SmsEventName>(name: K, listener: ListenerOf<K>, context?: unknown): this {
    return this.on(name, listener, context);
  }

  override once<K extends SmsEventName>(name: K, listener: ListenerOf<K>, context?: unknown): this {
    assertEventName('once', name);
    return super.once(name, this.#guard(name, listener as Listener) as ListenerOf<K>, context);
  }

  override off<K extends SmsEventName>(name: K, listener?: ListenerOf<K>, context?: unknown, once?: boolean): this {
    assertEventName('off', name);
    if (listener === undefined) {
      this.#wrappers.delete(name);
      return super.off(name, undefined, context, once);
    }
    const wrappers = this.#wrappers.get(name)?.get(listener as Listener);
    const wrapper = wrappers?.shift();
    if (wrappers?.length === 0) this.#wrappers.get(name)?.delete(listener as Listener);
    return super.off(name, (wrapper ?? listener) as ListenerOf<K>, context, once);
  }

  override removeListener<K extends SmsEventName>(
    name: K,
    listener?: ListenerOf<K>,
    context?: unknown,
    once?: boolean,
  ): this {
    return this.off(name, listener, context, once);
  }

  override removeAllListeners(name?: SmsEventName): this {
    if (name !== undefined) assertEventName('removeAllListeners', name);
    if (name === undefined) this.#wrappers.clear();
    else this.#wrappers.delete(name);
    return super.removeAllListeners(name);
  }

  #guard(name: string, listener: Listener): Listener {
    const guarded = (payload: never) => {
      try {
        listener(payload);
      } catch (error) {
        // An `error` listener that throws has nowhere left to report to.
        if (name !== 'error') this.emit('error', withCode({ error, source: 'listener' }));
      }
    };
    let byListener = this.#wrappers.get(name);
    if (!byListener) this.#wrappers.set(name, (byListener = new Map()));
    byListener.set(listener, [...(byListener.get(listener) ?? []), guarded]);
    return guarded;
  }
}

/** Returns a function that emits on `emitter`; what the router's parts are given. */
export function emitterOf(emitter: SmsEventEmitter): Emit {
  return (name, payload) => {
    (emitter.emit as (n: string, p: unknown) => boolean)(name, payload);
  };
}
