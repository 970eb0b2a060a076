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
 * response was lost was not delivered (submission is at-least-once), or reassembly of
 * concatenated MO messages (each MO part is reported on its own).
 */
import type smppLib from 'smpp';
import type { PDU, Session } from 'smpp';
import {
  DeliveryError,
  ReceiptNotYetMatched,
  type DeliveryAdapter,
  type DeliveryHandlers,
  type OutgoingPart,
  type SubmitAck,
} from './contract.js';
import { encodeGsm7 } from '../sms/gsm-tables.js';
import { outcome } from '../lifecycle/states.js';
import { classifySubmitStatus, interpretReceipt } from './smpp-receipt.js';
import { parseSmppUrl } from './smpp-url.js';

type SmppLib = typeof smppLib;

/** Options of {@link SmppDelivery}. Give `url`, or `host` and `systemId` (or both: fields win). */
export interface SmppDeliveryOptions {
  /** `smpp://system_id:password@host:port` (`ssmpp://` for TLS; `?system_type=` allowed). */
  url?: string;
  /** SMSC host. Required unless `url` names it. */
  host?: string;
  /** SMSC port. Default 2775 (3550 for TLS). */
  port?: number;
  /** Connect with TLS. Default false (true for an `ssmpp://` url). */
  tls?: boolean;
  /** The bind's `system_id`. Required unless `url` names it. */
  systemId?: string;
  /** The bind's `password`. Default empty. */
  password?: string;
  /** The bind's `system_type`. Default empty. */
  systemType?: string;
  /** `transceiver` (one bind), or `separate` transmitter and receiver binds. Default `transceiver`. */
  bindMode?: 'transceiver' | 'separate';
  /** Interval of the `enquire_link` keep-alive, ms; an unanswered one drops the link. Default 30000. */
  enquireLinkMs?: number;
  /** First reconnect delay after a drop or a failed bind, ms; doubles per failure. Default 1000. */
  reconnectMinMs?: number;
  /** Ceiling of the reconnect delay, ms. Default 30000. */
  reconnectMaxMs?: number;
  /** Most `submit_sm` awaiting their response at once, per bind. Default 50. */
  window?: number;
  /** Most `submit_sm` sent per second, per bind. Default unlimited (`Infinity`). */
  tps?: number;
  /** How long `submit` waits for a bound session and a window slot before rejecting (retryable), ms. Default 10000. */
  waitTimeoutMs?: number;
  /** How long a `submit_sm` or a bind waits for its response before it is given up (retryable), ms. Default 30000. */
  responseTimeoutMs?: number;
  /** `retryAfterMs` of the retryable error for ESME_RTHROTTLED / ESME_RMSGQFUL. Default 1000. */
  throttleRetryMs?: number;
  /** How parts of a multipart message are tied together: a UDH, or SAR TLVs. Default `udh`. */
  concatenation?: 'udh' | 'sar';
  /** `service_type` of each `submit_sm`. Default empty (the SMSC's default). */
  serviceType?: string;
  /** TON of a numeric sender of at most 8 digits (a short code). Default 3 (network specific). */
  shortCodeTon?: number;
  /** NPI of a short-code sender. Default 0 (unknown). */
  shortCodeNpi?: number;
}

interface SmppConfig {
  host: string;
  port: number;
  tls: boolean;
  systemId: string;
  password: string;
  systemType: string;
  bindMode: 'transceiver' | 'separate';
  enquireLinkMs: number;
  reconnectMinMs: number;
  reconnectMaxMs: number;
  window: number;
  tps: number;
  waitTimeoutMs: number;
  responseTimeoutMs: number;
  throttleRetryMs: number;
  concatenation: 'udh' | 'sar';
  serviceType: string;
  shortCodeTon: number;
  shortCodeNpi: number;
}

const OPTION_NAMES: readonly (keyof SmppDeliveryOptions)[] = [
  'url',
  'host',
  'port',
  'tls',
  'systemId',
  'password',
  'systemType',
  'bindMode',
  'enquireLinkMs',
  'reconnectMinMs',
  'reconnectMaxMs',
  'window',
  'tps',
  'waitTimeoutMs',
  'responseTimeoutMs',
  'throttleRetryMs',
  'concatenation',
  'serviceType',
  'shortCodeTon',
  'shortCodeNpi',
];

/** Command status codes the adapter answers or reads by name. */
const ESME_ROK = 0x00;
const ESME_RX_T_APPN = 0x64;
const ESME_RX_P_APPN = 0x65;

/** esm_class bits: message type (bits 2-5) and the UDH indicator. */
const ESM_TYPE_MASK = 0x3c;
const ESM_DELIVERY_RECEIPT = 0x04;
const ESM_UDHI = 0x40;

/** The most octets `short_message` holds; longer bodies go in `message_payload`. */
const SHORT_MESSAGE_MAX = 254;
/** Longest alphanumeric sender id a handset displays. */
const ALPHANUMERIC_SENDER_MAX = 11;

/**
 * Delivers parts over SMPP 3.4 and reports receipts and MO messages. `start` begins
 * connecting and resolves at once (bind failures go to `handlers.error` and are retried
 * with backoff); `submit` waits up to `waitTimeoutMs` for the bind.
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
  #transmitter: SmppBind | null = null;
  #handlers: DeliveryHandlers | null = null;
  #closing = false;

  /** Checks and resolves the options; throws a `TypeError` on a bad or unknown one. */
  constructor(options: SmppDeliveryOptions) {
    this.#config = resolveOptions(options);
  }

  /** True while the bind that submits is bound. */
  get bound(): boolean {
    return this.#transmitter?.bound ?? false;
  }

  /** Connects (and binds) in the background; resolves once connecting has begun. */
  async start(handlers: DeliveryHandlers): Promise<void> {
    if (this.#handlers) throw new Error('SmppDelivery.start was called twice');
    this.#handlers = handlers;
    const lib = await loadSmpp();
    if (this.#closing) return;
    const hooks: BindHooks = {
      deliver: (pdu, session) => void this.#onDeliver(pdu, session),
      error: (error) => this.#report(error),
    };
    const modes: BindMode[] =
      this.#config.bindMode === 'separate' ? ['transmitter', 'receiver'] : ['transceiver'];
    this.#binds = modes.map((mode) => new SmppBind(lib, this.#config, mode, hooks));
    this.#transmitter = this.#binds[0] ?? null;
    for (const bind of this.#binds) bind.start();
  }

  /** Resolves once the submitting bind is bound; rejects after `timeoutMs`. */
  waitForBind(timeoutMs = this.#config.waitTimeoutMs): Promise<void> {
    if (!this.#transmitter) return Promise.reject(new Error('SmppDelivery is not started'));
    return this.#transmitter.waitForBind(timeoutMs);
  }

  /** Submits one part as one `submit_sm`; see the class notes for addresses and encoding. */
  async submit(part: OutgoingPart): Promise<SubmitAck> {
    const transmitter = this.#transmitter;
    if (this.#closing) throw new DeliveryError('SMPP adapter is closed');
    if (!transmitter) throw new DeliveryError('SMPP adapter is not started');
    const fields = buildSubmitFields(part, this.#config);
    const carrierId = await transmitter.submit(fields);
    return { carrierId };
  }

  /** Unbinds every bind, closes its socket and clears every timer; idempotent. */
  async close(): Promise<void> {
    this.#closing = true;
    await Promise.all(this.#binds.map((bind) => bind.close()));
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
            this.#report(new Error(`SMPP receipt not understood: ${JSON.stringify(text)}`));
          } else if (receipt.outcome === null) {
            this.#report(new Error(`SMPP receipt for ${receipt.carrierId} has an unknown stat "${receipt.stat}"; ignored`));
          } else if (receipt.outcome !== 'intermediate') {
            await handlers.receipt({ carrierId: receipt.carrierId, outcome: receipt.outcome });
          }
        } else if (messageType === 0) {
          await handlers.inbound({
            from: String(pdu.source_addr ?? ''),
            to: String(pdu.destination_addr ?? ''),
            text,
            receivedAt: Date.now(),
          });
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

async function loadSmpp(): Promise<SmppLib> {
  try {
    const mod = (await import('smpp')) as unknown as { default?: SmppLib } & SmppLib;
    return mod.default ?? mod;
  } catch (error) {
    throw new Error('sms-outbox/smpp needs the `smpp` package: npm install smpp', { cause: error });
  }
}

function resolveOptions(options: SmppDeliveryOptions): SmppConfig {
  for (const key of Object.keys(options)) {
    if (!(OPTION_NAMES as readonly string[]).includes(key)) {
      const hint = closest(key, OPTION_NAMES);
      throw new TypeError(`Unknown SmppDelivery option "${key}"${hint ? `: did you mean "${hint}"?` : ''}`);
    }
  }
  const fromUrl = options.url !== undefined ? parseSmppUrl(options.url) : undefined;
  const tls = options.tls ?? fromUrl?.tls ?? false;
  const host = options.host ?? fromUrl?.host;
  const systemId = options.systemId ?? fromUrl?.systemId;
  if (!host) throw new TypeError('SmppDelivery needs `host` or a `url` (smpp://system_id:password@host:port)');
  if (!systemId) throw new TypeError('SmppDelivery needs `systemId` or a `url` with a user part');
  const config: SmppConfig = {
    host,
    port: options.port ?? fromUrl?.port ?? (tls ? 3550 : 2775),
    tls,
    systemId,
    password: options.password ?? fromUrl?.password ?? '',
    systemType: options.systemType ?? fromUrl?.systemType ?? '',
    bindMode: options.bindMode ?? 'transceiver',
    enquireLinkMs: options.enquireLinkMs ?? 30_000,
    reconnectMinMs: options.reconnectMinMs ?? 1_000,
    reconnectMaxMs: options.reconnectMaxMs ?? 30_000,
    window: options.window ?? 50,
    tps: options.tps ?? Number.POSITIVE_INFINITY,
    waitTimeoutMs: options.waitTimeoutMs ?? 10_000,
    responseTimeoutMs: options.responseTimeoutMs ?? 30_000,
    throttleRetryMs: options.throttleRetryMs ?? 1_000,
    concatenation: options.concatenation ?? 'udh',
    serviceType: options.serviceType ?? '',
    shortCodeTon: options.shortCodeTon ?? 3,
    shortCodeNpi: options.shortCodeNpi ?? 0,
  };
  if (!Number.isInteger(config.port) || config.port < 1 || config.port > 65535) {
    throw new TypeError(`SmppDelivery option "port" must be 1..65535, got ${config.port}`);
  }
  if (config.bindMode !== 'transceiver' && config.bindMode !== 'separate') {
    throw new TypeError(`SmppDelivery option "bindMode" must be "transceiver" or "separate"`);
  }
  if (config.concatenation !== 'udh' && config.concatenation !== 'sar') {
    throw new TypeError(`SmppDelivery option "concatenation" must be "udh" or "sar"`);
  }
  if (!Number.isInteger(config.window) || config.window < 1) {
    throw new TypeError(`SmppDelivery option "window" must be a positive integer, got ${config.window}`);
  }
  if (!(config.tps > 0)) throw new TypeError(`SmppDelivery option "tps" must be positive, got ${config.tps}`);
  for (const key of ['enquireLinkMs', 'reconnectMinMs', 'reconnectMaxMs', 'waitTimeoutMs', 'responseTimeoutMs', 'throttleRetryMs'] as const) {
    if (!(config[key] > 0) || !Number.isFinite(config[key])) {
      throw new TypeError(`SmppDelivery option "${key}" must be a positive number of ms, got ${config[key]}`);
    }
  }
  return config;
}

/** The known name nearest to `name` by edit distance, if it is a plausible typo. */
function closest(name: string, names: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(name.length / 3)) + 1;
  for (const candidate of names) {
    const distance = editDistance(name.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost);
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

/** The `submit_sm` fields for one part; throws a permanent error for an unusable sender. */
function buildSubmitFields(part: OutgoingPart, config: SmppConfig): Record<string, unknown> {
  const source = sourceAddress(part.sender, config);
  const body =
    part.encoding === 'UCS-2'
      ? Buffer.from(part.partText, 'utf16le').swap16()
      : encodeGsm7(part.partText);
  const multipart = part.count > 1;
  let esmClass = 0;
  let message = body;
  const fields: Record<string, unknown> = {};
  if (multipart && config.concatenation === 'udh') {
    const udh = Buffer.from([0x05, 0x00, 0x03, part.concatRef & 0xff, part.count & 0xff, (part.index + 1) & 0xff]);
    message = Buffer.concat([udh, body]);
    esmClass |= ESM_UDHI;
  } else if (multipart) {
    fields.sar_msg_ref_num = part.concatRef & 0xffff;
    fields.sar_total_segments = part.count & 0xff;
    fields.sar_segment_seqnum = (part.index + 1) & 0xff;
  }
  if (message.length > SHORT_MESSAGE_MAX) {
    fields.message_payload = message;
    message = Buffer.alloc(0);
  }
  return {
    ...fields,
    service_type: config.serviceType,
    source_addr_ton: source.ton,
    source_addr_npi: source.npi,
    source_addr: source.addr,
    dest_addr_ton: 1,
    dest_addr_npi: 1,
    destination_addr: part.recipient.replace(/^\+/, ''),
    esm_class: esmClass,
    registered_delivery: 1,
    data_coding: part.encoding === 'UCS-2' ? 0x08 : 0x00,
    short_message: message,
  };
}

function sourceAddress(sender: string, config: SmppConfig): { ton: number; npi: number; addr: string } {
  const digits = sender.replace(/^\+/, '');
  if (/^\d+$/.test(digits)) {
    return digits.length <= 8
      ? { ton: config.shortCodeTon, npi: config.shortCodeNpi, addr: digits }
      : { ton: 1, npi: 1, addr: digits };
  }
  if (sender.length === 0 || sender.length > ALPHANUMERIC_SENDER_MAX || !/^[\x20-\x7e]+$/.test(sender)) {
    throw new DeliveryError(`SMPP sender "${sender}" is not a short code, number, or 1-11 ASCII characters`, {
      permanent: true,
      outcome: outcome('rejected', 'invalid_source_address'),
    });
  }
  return { ton: 5, npi: 0, addr: sender };
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

/** The error name of an SMPP command status, e.g. `ESME_RINVPASWD`, or its hex code. */
/** Sockets whose writes of this turn are being held (see {@link sendAtEndOfTurn}). */
const corked = new WeakSet<Session['socket']>();

/**
 * Holds what is written to the session's socket for the rest of this turn of the event
 * loop and sends it in one write at its end. A window of submits, or the responses to a
 * burst of receipts, then costs one system call instead of one per PDU (the socket has
 * Nagle off, so each PDU was its own write and its own packet).
 */
function sendAtEndOfTurn(session: Session): void {
  const socket = session.socket;
  if (corked.has(socket)) return;
  corked.add(socket);
  socket.cork();
  setImmediate(() => {
    corked.delete(socket);
    socket.uncork();
  });
}

function statusName(lib: SmppLib, status: number): string {
  for (const [name, code] of Object.entries(lib.errors)) if (code === status) return name;
  return `0x${status.toString(16).padStart(8, '0')}`;
}

type BindMode = 'transceiver' | 'transmitter' | 'receiver';

interface BindHooks {
  deliver(pdu: PDU, session: Session): void;
  error(error: unknown): void;
}

interface QueuedSubmit {
  fields: Record<string, unknown>;
  resolve(carrierId: string): void;
  reject(error: unknown): void;
  timer: NodeJS.Timeout;
}

interface InFlight {
  resolve(carrierId: string): void;
  reject(error: unknown): void;
  timer: NodeJS.Timeout;
}

/**
 * One SMPP bind: connects, binds, keeps the link alive, reconnects with backoff, and
 * (for a transmitting bind) runs the submit window and TPS cap.
 */
class SmppBind {
  readonly #lib: SmppLib;
  readonly #config: SmppConfig;
  readonly #mode: BindMode;
  readonly #hooks: BindHooks;
  #session: Session | null = null;
  #sessionClosed: Promise<void> = Promise.resolve();
  #bound = false;
  #closing = false;
  #failures = 0;
  #reconnectTimer: NodeJS.Timeout | null = null;
  #enquireTimer: NodeJS.Timeout | null = null;
  #enquirePending = false;
  #paceTimer: NodeJS.Timeout | null = null;
  #nextSendAt = 0;
  readonly #queue: QueuedSubmit[] = [];
  readonly #inFlight = new Map<number, InFlight>();
  readonly #bindWaiters = new Set<() => void>();

  constructor(lib: SmppLib, config: SmppConfig, mode: BindMode, hooks: BindHooks) {
    this.#lib = lib;
    this.#config = config;
    this.#mode = mode;
    this.#hooks = hooks;
  }

  get bound(): boolean {
    return this.#bound;
  }

  start(): void {
    this.#connect();
  }

  waitForBind(timeoutMs: number): Promise<void> {
    if (this.#bound) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const done = () => {
        clearTimeout(timer);
        this.#bindWaiters.delete(done);
        resolve();
      };
      const timer = setTimeout(() => {
        this.#bindWaiters.delete(done);
        reject(new Error(`SMPP ${this.#mode} not bound within ${timeoutMs} ms`));
      }, timeoutMs);
      timer.unref();
      this.#bindWaiters.add(done);
    });
  }

  submit(fields: Record<string, unknown>): Promise<string> {
    if (this.#closing) return Promise.reject(new DeliveryError('SMPP adapter is closed'));
    return new Promise<string>((resolve, reject) => {
      const job: QueuedSubmit = {
        fields,
        resolve,
        reject,
        timer: setTimeout(() => {
          const at = this.#queue.indexOf(job);
          if (at >= 0) this.#queue.splice(at, 1);
          const why = this.#bound ? `no window slot free (window ${this.#config.window})` : 'not bound';
          reject(new DeliveryError(`SMPP submit waited ${this.#config.waitTimeoutMs} ms: ${why}`));
        }, this.#config.waitTimeoutMs),
      };
      job.timer.unref();
      this.#queue.push(job);
      this.#pump();
    });
  }

  async close(): Promise<void> {
    this.#closing = true;
    this.#clearTimer('reconnect');
    this.#clearTimer('pace');
    for (const job of this.#queue.splice(0)) {
      clearTimeout(job.timer);
      job.reject(new DeliveryError('SMPP adapter closed before the part was sent'));
    }
    const session = this.#session;
    if (!session) return;
    const closed = this.#sessionClosed;
    if (this.#bound) {
      let timer: NodeJS.Timeout | undefined;
      const answered = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, Math.min(this.#config.responseTimeoutMs, 5_000));
        timer.unref();
        if (!session.send(new this.#lib.PDU('unbind'), () => resolve())) resolve();
      });
      // A link the SMSC already dropped never answers the unbind.
      await Promise.race([answered, closed]);
      clearTimeout(timer);
    }
    // An SMSC that never closes its side must not hold close() open.
    const force = setTimeout(() => session.destroy(), 2_000);
    force.unref();
    session.close();
    await closed;
    clearTimeout(force);
  }

  #connect(): void {
    this.#reconnectTimer = null;
    if (this.#closing) return;
    const { host, port, tls } = this.#config;
    const session = this.#lib.connect({ host, port, tls });
    this.#session = session;
    this.#sessionClosed = new Promise((resolve) => session.once('close', () => resolve()));
    let errorReported = false;
    session.on(tls ? 'secureConnect' : 'connect', () => {
      // PDUs are small and each waits for an answer: with Nagle's algorithm on, a submit
      // could sit in the kernel for a delayed ACK (up to 40 ms on Linux) while the window
      // stays full.
      session.socket.setNoDelay(true);
      this.#bind(session);
    });
    session.on('error', (error: Error) => {
      if (!errorReported && !this.#closing) {
        errorReported = true;
        const what = this.#bound ? 'connection' : 'connect';
        this.#hooks.error(new Error(`SMPP ${what} to ${host}:${port} failed: ${error.message}`, { cause: error }));
      }
      // The library stops reading after a malformed PDU; only a new connection recovers.
      session.destroy();
    });
    session.on('close', () => this.#onClose(session, errorReported));
    session.on('deliver_sm', (pdu: PDU) => this.#hooks.deliver(pdu, session));
    // Some SMSCs send receipts and MO as data_sm; it is read the same way.
    session.on('data_sm', (pdu: PDU) => this.#hooks.deliver(pdu, session));
    session.on('enquire_link', (pdu: PDU) => session.send(pdu.response()));
    // An unanswered request can stall the SMSC's window; refuse what we do not know.
    session.on('unknown', (pdu: PDU) => {
      if (!pdu.isResponse()) session.send(pdu.response());
    });
    session.on('unbind', (pdu: PDU) => {
      if (!this.#closing) this.#hooks.error(new Error(`SMPP ${host}:${port} unbound us; reconnecting`));
      this.#bound = false;
      session.send(pdu.response());
      session.close();
    });
  }

  #bind(session: Session): void {
    const timer = setTimeout(() => {
      this.#hooks.error(new Error(`SMPP bind timed out after ${this.#config.responseTimeoutMs} ms`));
      session.destroy();
    }, this.#config.responseTimeoutMs);
    timer.unref();
    session.once('close', () => clearTimeout(timer));
    const pdu = new this.#lib.PDU(`bind_${this.#mode}`, {
      system_id: this.#config.systemId,
      password: this.#config.password,
      system_type: this.#config.systemType,
      interface_version: 0x34,
    });
    session.send(pdu, (response) => {
      clearTimeout(timer);
      if (session !== this.#session || this.#closing) return;
      if (response.command_status !== ESME_ROK) {
        this.#hooks.error(
          new Error(`SMPP bind failed: ${statusName(this.#lib, response.command_status)} (${this.#mode}); retrying`),
        );
        session.destroy();
        return;
      }
      this.#bound = true;
      this.#failures = 0;
      this.#enquirePending = false;
      this.#enquireTimer = setInterval(() => this.#enquire(session), this.#config.enquireLinkMs);
      this.#enquireTimer.unref();
      for (const waiter of [...this.#bindWaiters]) waiter();
      this.#pump();
    });
  }

  #enquire(session: Session): void {
    if (this.#enquirePending) {
      this.#hooks.error(new Error('SMPP enquire_link unanswered; dropping the connection'));
      session.destroy();
      return;
    }
    this.#enquirePending = true;
    session.send(new this.#lib.PDU('enquire_link'), () => {
      this.#enquirePending = false;
    });
  }

  #onClose(session: Session, errorReported: boolean): void {
    if (session !== this.#session) return;
    const wasBound = this.#bound;
    this.#bound = false;
    this.#session = null;
    this.#clearTimer('enquire');
    this.#clearTimer('pace');
    const lost = [...this.#inFlight.values()];
    this.#inFlight.clear();
    for (const flight of lost) {
      clearTimeout(flight.timer);
      flight.reject(new DeliveryError('SMPP connection lost before submit_sm_resp; the part may be resent'));
    }
    if (this.#closing) return;
    if (wasBound && !errorReported) {
      this.#hooks.error(new Error(`SMPP connection lost (${lost.length} submit_sm in flight); reconnecting`));
    }
    const ceiling = Math.min(this.#config.reconnectMaxMs, this.#config.reconnectMinMs * 2 ** this.#failures);
    this.#failures = Math.min(this.#failures + 1, 30);
    // Jitter spreads the reconnects of many instances after an SMSC restart.
    const delay = ceiling / 2 + Math.random() * (ceiling / 2);
    this.#reconnectTimer = setTimeout(() => this.#connect(), delay);
    this.#reconnectTimer.unref();
  }

  /** Sends queued submits while bound, within the window and the TPS cap. */
  #pump(): void {
    while (this.#bound && this.#session && this.#queue.length > 0 && this.#inFlight.size < this.#config.window) {
      const now = Date.now();
      if (now < this.#nextSendAt) {
        if (!this.#paceTimer) {
          this.#paceTimer = setTimeout(() => {
            this.#paceTimer = null;
            this.#pump();
          }, this.#nextSendAt - now);
          this.#paceTimer.unref();
        }
        return;
      }
      if (Number.isFinite(this.#config.tps)) {
        this.#nextSendAt = Math.max(now, this.#nextSendAt) + 1000 / this.#config.tps;
      }
      const job = this.#queue.shift();
      if (job) this.#send(this.#session, job);
    }
  }

  #send(session: Session, job: QueuedSubmit): void {
    clearTimeout(job.timer);
    let pdu: PDU;
    let sent: boolean;
    try {
      pdu = new this.#lib.PDU('submit_sm', job.fields);
      sendAtEndOfTurn(session);
      sent = session.send(pdu, (response) => this.#onSubmitResponse(response));
    } catch (error) {
      // The same fields would fail the same way on every retry.
      job.reject(
        new DeliveryError('SMPP could not encode the submit_sm', {
          permanent: true,
          outcome: outcome('rejected', 'rejected'),
          cause: error,
        }),
      );
      return;
    }
    if (!sent) {
      job.reject(new DeliveryError('SMPP connection not writable; the part was not sent'));
      return;
    }
    const sequence = pdu.sequence_number;
    const timer = setTimeout(() => {
      if (this.#inFlight.delete(sequence)) {
        job.reject(new DeliveryError(`SMPP submit_sm_resp not received within ${this.#config.responseTimeoutMs} ms`));
        this.#pump();
      }
    }, this.#config.responseTimeoutMs);
    timer.unref();
    this.#inFlight.set(sequence, { resolve: job.resolve, reject: job.reject, timer });
  }

  #onSubmitResponse(response: PDU): void {
    const flight = this.#inFlight.get(response.sequence_number);
    if (!flight) return;
    this.#inFlight.delete(response.sequence_number);
    clearTimeout(flight.timer);
    const status = response.command_status;
    if (status === ESME_ROK && typeof response.message_id === 'string' && response.message_id !== '') {
      flight.resolve(response.message_id);
    } else {
      flight.reject(this.#submitError(status));
    }
    this.#pump();
  }

  #submitError(status: number): DeliveryError {
    const name = statusName(this.#lib, status);
    if (status === ESME_ROK) return new DeliveryError('SMPP submit_sm_resp carried no message_id');
    const kind = classifySubmitStatus(status);
    switch (kind.kind) {
      case 'throttled':
        return new DeliveryError(`SMPP submit_sm throttled: ${name}`, { retryAfterMs: this.#config.throttleRetryMs });
      case 'permanent':
        return new DeliveryError(`SMPP submit_sm refused: ${name}`, { permanent: true, outcome: kind.outcome });
      case 'retryable':
        return new DeliveryError(`SMPP submit_sm failed: ${name}`);
    }
  }

  #clearTimer(which: 'reconnect' | 'enquire' | 'pace'): void {
    const timer = which === 'reconnect' ? this.#reconnectTimer : which === 'enquire' ? this.#enquireTimer : this.#paceTimer;
    // clearTimeout also clears an interval.
    if (timer) clearTimeout(timer);
    if (which === 'reconnect') this.#reconnectTimer = null;
    else if (which === 'enquire') this.#enquireTimer = null;
    else this.#paceTimer = null;
  }
}
