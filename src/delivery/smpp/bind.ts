/**
 * The bind's state machine: one connection to the SMSC that connects, binds, answers the
 * SMSC's requests, keeps the link alive with `enquire_link`, and after any loss
 * reconnects with jittered exponential backoff, while its {@link SubmitWindow} sends
 * only when the session is bound. Received `deliver_sm` and `data_sm` go to the adapter
 * through hooks, so this file knows the connection and nothing of what messages mean.
 */
import type { PDU, Session } from 'smpp';
import { ESME_ROK, statusName, type SmppLib } from './library.js';
import type { SmppConfig } from './options.js';
import { SubmitWindow } from './window.js';

/** Which bind PDU a {@link SmppBind} sends. */
export type BindMode = 'transceiver' | 'transmitter' | 'receiver';

/** What a {@link SmppBind} tells its adapter. */
export interface BindHooks {
  /** A `deliver_sm` or `data_sm` arrived; the adapter answers it on `session`. */
  deliver(pdu: PDU, session: Session): void;
  /** A connection, bind or link failure, reported while the bind recovers on its own. */
  error(error: unknown): void;
}

/**
 * One SMPP bind: connects, binds, keeps the link alive, reconnects with backoff, and
 * lends its session to a {@link SubmitWindow} while bound.
 */
export class SmppBind {
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
  readonly #window: SubmitWindow;
  readonly #bindWaiters = new Set<() => void>();

  /** Nothing connects before {@link SmppBind.start}. */
  constructor(lib: SmppLib, config: SmppConfig, mode: BindMode, hooks: BindHooks) {
    this.#lib = lib;
    this.#config = config;
    this.#mode = mode;
    this.#hooks = hooks;
    this.#window = new SubmitWindow(lib, config, () => (this.#bound ? this.#session : null));
  }

  /** True while the session is bound (and not being unbound). */
  get bound(): boolean {
    return this.#bound;
  }

  /** Begins connecting; failures go to `hooks.error` and are retried with backoff. */
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
        reject(new Error(`SMPP ${this.#mode} not bound within ${timeoutMs} ms`));
      }, timeoutMs);
      timer.unref();
      this.#bindWaiters.add(done);
    });
  }

  /** Sends one `submit_sm` through the window; resolves with the carrier's message id. */
  submit(fields: Record<string, unknown>): Promise<string> {
    return this.#window.submit(fields);
  }

  /** Unbinds (when bound), closes the socket and clears every timer; rejects queued submits. */
  async close(): Promise<void> {
    this.#closing = true;
    this.#clearTimer('reconnect');
    this.#window.close();
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
      this.#window.pump();
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
    const lost = this.#window.sessionLost();
    if (this.#closing) return;
    if (wasBound && !errorReported) {
      this.#hooks.error(new Error(`SMPP connection lost (${lost} submit_sm in flight); reconnecting`));
    }
    const ceiling = Math.min(this.#config.reconnectMaxMs, this.#config.reconnectMinMs * 2 ** this.#failures);
    this.#failures = Math.min(this.#failures + 1, 30);
    // Jitter spreads the reconnects of many instances after an SMSC restart.
    const delay = ceiling / 2 + Math.random() * (ceiling / 2);
    this.#reconnectTimer = setTimeout(() => this.#connect(), delay);
    this.#reconnectTimer.unref();
  }

  #clearTimer(which: 'reconnect' | 'enquire'): void {
    const timer = which === 'reconnect' ? this.#reconnectTimer : this.#enquireTimer;
    // clearTimeout also clears an interval.
    if (timer) clearTimeout(timer);
    if (which === 'reconnect') this.#reconnectTimer = null;
    else this.#enquireTimer = null;
  }
}
