/**
 * The SMPP 3.4 delivery adapter: submits parts as `submit_sm` over a bind to a real
 * SMSC and reports `deliver_sm` receipts and mobile-originated messages, on top of the
 * `smpp` package (an optional peer dependency, loaded when `start` is called).
 *
 * What it promises: a part is resolved only on a `submit_sm_resp` with status 0; every
 * other ending (refusal, lost connection, timeout, close) rejects, retryably unless the
 * SMSC's status can never succeed. Every `deliver_sm` is answered, after its handler
 * settled: ESME_ROK once it resolved (the receipt is stored), ESME_RX_T_APPN when it
 * rejected (the SMSC delivers it again). What it does not promise: that a part whose
 * response was lost was not delivered (submission is at-least-once). Each part of a long MO
 * message (UDH or SAR parts) is reported with its place (mo-parts.ts), for the router to join.
 *
 * This file wires the parts: options resolved by options.ts, the binds (bind.ts), each
 * that submits with its window on the adapter's one submit queue and pacer (window.ts,
 * ../pacing.ts), `submit_sm` fields from submit-fields.ts, and received `deliver_sm`
 * read here with receipt.ts and handed to the host's handlers.
 */
import type { PDU, Session } from 'smpp';
import {
  DeliveryError,
  ReceiptNotYetMatched,
  type BindStatus,
  type ConnectionChange,
  type DeliveryAdapter,
  type DeliveryHandlers,
  type OutgoingPart,
  type SubmitAck,
} from '../contract.js';
import { SmppBind, type BindHooks, type BindMode } from './bind.js';
import { SubmitQueue } from './window.js';
import { LocalPacer, SharedPacer, type SubmitPacer } from '../pacing.js';
import { RedisSubmitPermits } from '../redis-submit-permits.js';
import { ESME_ROK, loadSmpp, sendAtEndOfTurn } from './library.js';
import { resolveSmppOptions, type SmppConfig, type SmppDeliveryOptions } from './options.js';
import { interpretReceipt } from './receipt.js';
import { moPartOf, type MoPartFields } from './mo-parts.js';
import { buildSubmitFields } from './submit-fields.js';
import { EventError } from '../../errors.js';

/** Command statuses a `deliver_sm` is answered with when it is not taken. */
const ESME_RX_T_APPN = 0x64;
const ESME_RX_P_APPN = 0x65;

/** esm_class bits 2-5: the message type of a `deliver_sm`. */
const ESM_TYPE_MASK = 0x3c;
const ESM_DELIVERY_RECEIPT = 0x04;

/**
 * Delivers parts over SMPP 3.4 and reports receipts and MO messages. `start` begins
 * connecting and resolves at once; each bind reports coming up and going down to
 * `handlers.connection` (without it, each failure to `handlers.error`) and reconnects
 * with backoff; `submit` waits up to `waitTimeoutMs` for the bind.
 *
 * Addresses: a numeric sender of at most 8 digits is a short code (TON `shortCodeTon`,
 * NPI `shortCodeNpi`), a longer numeric one international (TON 1, NPI 1), anything else
 * alphanumeric (TON 5, NPI 0, at most 11 ASCII characters, else a permanent
 * `invalid_source_address`). The destination is international (TON 1, NPI 1).
 * Encoding: GSM-7 parts go as data_coding 0 (the SMSC default alphabet, one septet per
 * octet), UCS-2 parts as data_coding 8. Receipts are requested (registered_delivery 1).
 */
export class SmppDelivery implements DeliveryAdapter {
  readonly #config: SmppConfig;
  #binds: SmppBind[] = [];
  /** The binds that submit. */
  #submitters: SmppBind[] = [];
  #queue: SubmitQueue | null = null;
  #handlers: DeliveryHandlers | null = null;
  #closing = false;

  /** Checks and resolves the options; throws a `TypeError` on a bad or unknown one. */
  constructor(options: SmppDeliveryOptions) {
    this.#config = resolveSmppOptions(options);
  }

  /** The `tps` option, when set: the worker gives the adapter only about a twentieth of a second of submits at once. */
  get submitsPerSecond(): number | undefined {
    return Number.isFinite(this.#config.tps) ? this.#config.tps : undefined;
  }

  /** True while a bind that submits is bound. */
  get bound(): boolean {
    return this.#submitters.some((bind) => bind.bound);
  }

  /** Connects (and binds) in the background; resolves once connecting has begun. */
  async start(handlers: DeliveryHandlers): Promise<void> {
    if (this.#handlers) throw new Error('SmppDelivery.start was called twice');
    this.#handlers = handlers;
    const lib = await loadSmpp();
    if (this.#closing) return;
    const hooks: BindHooks = {
      deliver: (pdu, session) => void this.#onDeliver(pdu, session),
      connection: (change) => this.#connection(change),
    };
    const config = this.#config;
    const queue = new SubmitQueue(config, this.#pacer());
    this.#queue = queue;
    const mode: BindMode = config.bindMode === 'separate' ? 'transmitter' : 'transceiver';
    // One bind keeps the plain mode as its name; several are numbered (a bounded label set).
    const name = (i: number) => (config.binds === 1 ? mode : `${mode}.${i + 1}`);
    this.#submitters = Array.from({ length: config.binds }, (_, i) => new SmppBind(lib, config, mode, name(i), queue, hooks));
    this.#binds = [...this.#submitters];
    if (config.bindMode === 'separate') this.#binds.push(new SmppBind(lib, config, 'receiver', 'receiver', null, hooks));
    for (const bind of this.#binds) bind.start();
  }

  /** Resolves once every bind (those that submit and the receiver) is bound; rejects after `timeoutMs`. */
  async waitForBind(timeoutMs = this.#config.waitTimeoutMs): Promise<void> {
    if (this.#binds.length === 0) throw new Error('SmppDelivery is not started');
    await Promise.all(this.#binds.map((bind) => bind.waitForBind(timeoutMs)));
  }

  /** Submits one part as one `submit_sm`; see the class notes for addresses and encoding. */
  async submit(part: OutgoingPart): Promise<SubmitAck> {
    const queue = this.#queue;
    if (this.#closing) throw new DeliveryError('SMPP adapter is closed');
    if (!queue) throw new DeliveryError('SMPP adapter is not started');
    const fields = buildSubmitFields(part, this.#config);
    return queue.submit(fields);
  }

  /** Each bind's state, the adapter's `tps` (shared by its binds), each bind's sends a second and its window; see {@link DeliveryAdapter.status}. */
  status(): BindStatus[] {
    const tpsLimit = Number.isFinite(this.#config.tps) ? this.#config.tps : null;
    return this.#binds.map((bind) => bind.status(tpsLimit));
  }

  /** Unbinds every bind, closes its socket and clears every timer; idempotent. */
  async close(): Promise<void> {
    this.#closing = true;
    this.#queue?.close();
    await Promise.all(this.#binds.map((bind) => bind.close()));
  }

  /** The pace of every bind's submits together: `tps`, shared through Redis with `sharedRate`. */
  #pacer(): SubmitPacer | null {
    const { tps, sharedRate } = this.#config;
    if (!Number.isFinite(tps)) return null;
    if (!sharedRate) return new LocalPacer(tps);
    const permits = new RedisSubmitPermits({ sendCommand: sharedRate.sendCommand, key: sharedRate.key, tps });
    return new SharedPacer(permits, tps / sharedRate.instances, (error) => this.#report(error));
  }

  /** A bind's state, to `handlers.connection`; without one, each failure to `handlers.error`. */
  #connection(change: ConnectionChange): void {
    const handlers = this.#handlers;
    if (this.#closing || !handlers) return;
    if (!handlers.connection) {
      if (change.state === 'unbound') this.#report(change.error);
      return;
    }
    try {
      handlers.connection(change);
    } catch {
      // A throwing handler must not break the connection logic.
    }
  }

  #report(error: unknown): void {
    try {
      this.#handlers?.error(error);
    } catch {
      // A throwing error handler must not break the connection logic.
    }
  }

  async #onDeliver(pdu: PDU, session: Session): Promise<void> {
    let status = ESME_ROK;
    const handlers = this.#handlers;
    try {
      if (this.#closing || !handlers) {
        // Refused transiently, so the SMSC delivers it again on the next bind.
        status = ESME_RX_T_APPN;
      } else {
        const messageType = Number(pdu.esm_class ?? 0) & ESM_TYPE_MASK;
        const text = pduText(pdu);
        if (messageType === ESM_DELIVERY_RECEIPT) {
          const receipt = interpretReceipt({
            text,
            receiptedMessageId: typeof pdu.receipted_message_id === 'string' ? pdu.receipted_message_id : null,
            messageState: typeof pdu.message_state === 'number' ? pdu.message_state : null,
          });
          if (!receipt) {
            // Retrying cannot make an unreadable receipt readable.
            status = ESME_RX_P_APPN;
            this.#report(new EventError('RECEIPT_UNREADABLE', `SMPP receipt not understood: ${JSON.stringify(text)}`));
          } else if (receipt.outcome === null) {
            this.#report(new EventError('RECEIPT_UNREADABLE', `SMPP receipt for ${receipt.carrierId} has an unknown stat "${receipt.stat}"; ignored`));
          } else if (receipt.outcome !== 'intermediate') {
            await handlers.receipt({ carrierId: receipt.carrierId, outcome: receipt.outcome });
          }
        } else if (messageType === 0) {
          const message = { from: String(pdu.source_addr ?? ''), to: String(pdu.destination_addr ?? ''), text, receivedAt: Date.now() };
          const part = moPartOf(pdu as MoPartFields);
          // A part of a long MO goes on with its place: the router joins the parts (through the
          // storage, so they may come on any bind of any instance), and is answered once stored.
          await handlers.inbound(part === null ? message : { ...message, part });
        }
        // Other message types (SME acknowledgements, intermediate notifications) are acked and dropped.
      }
    } catch (error) {
      // Refused transiently either way, so the SMSC delivers it again; a receipt that could
      // not be recorded yet is expected (see DeliveryHandlers.receipt), not a failure.
      status = ESME_RX_T_APPN;
      if (!ReceiptNotYetMatched.is(error)) {
        this.#report(new Error('SMPP deliver_sm handler failed; answered ESME_RX_T_APPN so the SMSC retries', { cause: error }));
      }
    }
    sendAtEndOfTurn(session);
    session.send(pdu.response({ command_status: status }));
  }
}

/** The `sms-outbox/smpp` entry's factory: `createSmppDelivery(options)` equals `new SmppDelivery(options)`. */
export function createSmppDelivery(options: SmppDeliveryOptions): SmppDelivery {
  return new SmppDelivery(options);
}

/** The text of a `deliver_sm`, decoded by the library per its data_coding. */
function pduText(pdu: PDU): string {
  const short = messageText(pdu.short_message);
  return short !== '' ? short : messageText(pdu.message_payload);
}

function messageText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (Buffer.isBuffer(value)) return value.toString('latin1');
  if (typeof value === 'object' && 'message' in value) return messageText((value as { message: unknown }).message);
  return '';
}
