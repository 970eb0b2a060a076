/**
 * The bind's state machine: one connection to the SMSC that connects, binds, answers the
 * SMSC's requests, keeps the link alive with `enquire_link`, and after any loss
 * reconnects with jittered exponential backoff, while its {@link SubmitWindow} sends
 * only when the session is bound. Received `deliver_sm` and `data_sm` go to the adapter
 * through hooks, so this file knows the connection and nothing of what messages mean.
 */
import type { PDU, Session } from 'smpp';
import type { BindStatus, ConnectionChange } from '../contract.js';
import { ESME_ROK, statusName, type SmppLib } from './library.js';
import type { SmppConfig } from './options.js';
import { SubmitWindow, type SubmitQueue } from './window.js';

/** Which bind PDU a {@link SmppBind} sends. */
export type BindMode = 'transceiver' | 'transmitter' | 'receiver';

/** What a {@link SmppBind} tells its adapter. */
export interface BindHooks {
  /** A `deliver_sm` or `data_sm` arrived; the adapter answers it on `session`. */
  deliver(pdu: PDU, session: Session): void;
  /**
   * The bind came up, or went down: once per session, with the first failure that ended it
   * (connect, bind, link), while the bind recovers on its own.
   */
  connection(change: ConnectionChange): void;
}

/**
 * One SMPP bind: connects, binds, keeps the link alive, reconnects with backoff, and
 * lends its session to a {@link SubmitWindow} while bound (a bind that submits: a
 * receiver has none).
 */
export class SmppBind {
  readonly #lib: SmppLib;
  readonly #config: SmppConfig;
  readonly #mode: BindMode;
  /** What its connection reports name it: the mode, numbered when the adapter has several. */
  readonly #name: string;
  readonly #hooks: BindHooks;
  #session: Session | null = null;
  #sessionClosed: Promise<void> = Promise.resolve();
  #bound = false;
  /** What {@link SmppBind.status} says it is, and since when (epoch ms). */
  #state: BindStatus['state'] = 'connecting';
  #since = Date.now();
  /** Bound at least once: the next bind is a reconnect. */
  #everBound = false;
  /** The first failure of the current session: what its close reports. */
  #failure: Error | null = null;
  #closing = false;
  /** Sessions that failed in a row since the last bind: the backoff's exponent and the reported attempt. */
  #failures = 0;
  #reconnectTimer: NodeJS.Timeout | null = null;
  #enquireTimer: NodeJS.Timeout | null = null;
  #enquirePending = false;
  readonly #window: SubmitWindow | null;
  readonly #bindWaiters = new Set<() => void>();

  /**
   * Nothing connects before {@link SmppBind.start}. `queue` is where a bind that submits
   * takes its submits from (`null` for a receiver); `name` what its reports call it.
   */
  constructor(lib: SmppLib, config: SmppConfig, mode: BindMode, name: string, queue: SubmitQueue | null, hooks: BindHooks) {
    this.#lib = lib;
    this.#config = config;
    this.#mode = mode;
    this.#name = name;
    this.#hooks = hooks;
    this.#window = queue && new SubmitWindow(lib, config, queue, () => (this.#bound ? this.#session : null), name);
  }

  /** Its state now, its window and its sends a second; `tpsLimit` is its adapter's pace. */
  status(tpsLimit: number | null): BindStatus {
    const window = this.#window;
    return {
      bind: this.#name,
      state: this.#state,
      since: this.#since,
      submits: window !== null,
      tpsLimit: window === null ? null : tpsLimit,
      tpsInUse: window?.sentPerSecond ?? 0,
      window: window === null ? null : this.#config.window,
      inFlight: window?.inFlight ?? 0,
    };
  }

  #enter(state: BindStatus['state']): void {
    if (this.#state === state) return;
    this.#state = state;
    this.#since = Date.now();
  }

  /** What its connection reports call it. */
  get name(): string {
    return this.#name;
  }

  /** True for a bind that submits (a transceiver or a transmitter). */
  get submits(): boolean {
    return this.#window !== null;
  }

  /** True while the session is bound (and not being unbound). */
  get bound(): boolean {
    return this.#bound;
  }

  /** Begins connecting; failures go to `hooks.connection` and are retried with backoff. */
  start(): void {
    this.#connect();
  }

  /** Resolves once bound; rejects after `timeoutMs`. */
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
        reject(new Error(`SMPP ${this.#name} not bound within ${timeoutMs} ms`));
      }, timeoutMs);
      timer.unref();
      this.#bindWaiters.add(done);
    });
  }

  /** Unbinds (when bound), closes the socket and clears every timer; rejects queued submits. */
  async close(): Promise<void> {
    this.#closing = true;
    this.#enter('closed');
    this.#clearTimer('reconnect');
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
    this.#failure = null;
    this.#sessionClosed = new Promise((resolve) => session.once('close', () => resolve()));
    session.on(tls ? 'secureConnect' : 'connect', () => {
      // PDUs are small and each waits for an answer: with Nagle's algorithm on, a submit
      // could sit in the kernel for a delayed ACK (up to 40 ms on Linux) while the window
      // stays full.
      session.socket.setNoDelay(true);
      this.#bind(session);
    });
    session.on('error', (error: Error & { code?: unknown }) => {
      const what = this.#bound ? 'connection' : 'connect';
      // The reason is in the message and not also in a `cause`: pino's serializer appends
      // each cause's message, which would print it twice. The system code stays matchable.
      const failure = new Error(`SMPP ${what} to ${host}:${port} failed: ${error.message}`);
      if (typeof error.code === 'string') Object.assign(failure, { code: error.code });
      this.#fail(session, failure);
      // The library stops reading after a malformed PDU; only a new connection recovers.
      session.destroy();
    });
    session.on('close', () => this.#onClose(session));
    session.on('deliver_sm', (pdu: PDU) => this.#hooks.deliver(pdu, session));
    // Some SMSCs send receipts and MO as data_sm; it is read the same way.
    session.on('data_sm', (pdu: PDU) => this.#hooks.deliver(pdu, session));
    session.on('enquire_link', (pdu: PDU) => session.send(pdu.response()));
    // An unanswered request can stall the SMSC's window; refuse what we do not know.
    session.on('unknown', (pdu: PDU) => {
      if (!pdu.isResponse()) session.send(pdu.response());
    });
    session.on('unbind', (pdu: PDU) => {
      this.#fail(session, new Error(`SMPP ${host}:${port} unbound us; reconnecting`));
      this.#bound = false;
      session.send(pdu.response());
      session.close();
    });
  }

  #bind(session: Session): void {
    const timer = setTimeout(() => {
      this.#fail(session, new Error(`SMPP bind timed out after ${this.#config.responseTimeoutMs} ms`));
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
        this.#fail(session, new Error(`SMPP bind failed: ${statusName(this.#lib, response.command_status)} (${this.#name}); retrying`));
        session.destroy();
        return;
      }
      const reconnect = this.#everBound;
      this.#bound = true;
      this.#enter('bound');
      this.#everBound = true;
      this.#failures = 0;
      this.#enquirePending = false;
      this.#enquireTimer = setInterval(() => this.#enquire(session), this.#config.enquireLinkMs);
      this.#enquireTimer.unref();
      for (const waiter of [...this.#bindWaiters]) waiter();
      this.#hooks.connection({ bind: this.#name, state: 'bound', reconnect });
      this.#window?.pump();
    });
  }

  #enquire(session: Session): void {
    if (this.#enquirePending) {
      this.#fail(session, new Error('SMPP enquire_link unanswered; dropping the connection'));
      session.destroy();
      return;
    }
    this.#enquirePending = true;
    session.send(new this.#lib.PDU('enquire_link'), () => {
      this.#enquirePending = false;
    });
  }

  /** Keeps the first failure of `session`, for its close to report; later ones follow from it. */
  #fail(session: Session, failure: Error): void {
    if (session === this.#session && this.#failure === null && !this.#closing) this.#failure = failure;
  }

  #onClose(session: Session): void {
    if (session !== this.#session) return;
    const wasBound = this.#bound;
    this.#bound = false;
    this.#session = null;
    this.#clearTimer('enquire');
    const lost = this.#window?.sessionLost() ?? 0;
    if (this.#closing) return;
    if (this.#everBound) this.#enter('reconnecting');
    const { host, port } = this.#config;
    const error =
      this.#failure ??
      new Error(
        wasBound
          ? `SMPP connection lost: ${host}:${port} (${lost} submit_sm in flight); reconnecting`
          : `SMPP connection to ${host}:${port} closed before the bind completed`,
      );
    this.#failure = null;
    const ceiling = Math.min(this.#config.reconnectMaxMs, this.#config.reconnectMinMs * 2 ** Math.min(this.#failures, 30));
    this.#failures += 1;
    // Jitter spreads the reconnects of many instances after an SMSC restart.
    const delay = ceiling / 2 + Math.random() * (ceiling / 2);
    this.#reconnectTimer = setTimeout(() => this.#connect(), delay);
    this.#reconnectTimer.unref();
    this.#hooks.connection({ bind: this.#name, state: 'unbound', error, attempt: this.#failures, retryInMs: Math.round(delay) });
  }

  #clearTimer(which: 'reconnect' | 'enquire'): void {
    const timer = which === 'reconnect' ? this.#reconnectTimer : this.#enquireTimer;
    // clearTimeout also clears an interval.
    if (timer) clearTimeout(timer);
    if (which === 'reconnect') this.#reconnectTimer = null;
    else this.#enquireTimer = null;
  }
}
