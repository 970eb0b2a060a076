/**
 * Submitting over one adapter's binds: a {@link SubmitQueue} the adapter's submits wait in
 * until a bound bind has a window slot and the pacer a permit, and a {@link SubmitWindow}
 * per bind that takes them from it and sends them as `submit_sm`; each is settled by its
 * `submit_sm_resp` or given up after `responseTimeoutMs`. One queue for every bind spreads
 * the submits over whichever binds have room, and leaves none waiting on a bind that is
 * down while another is up. Kept apart from the bind's connection state machine, which only
 * tells its window which session is usable and when that session is lost.
 */
import type { PDU, Session } from 'smpp';
import { DeliveryError } from '../contract.js';
import type { SubmitPacer } from '../pacing.js';
import { outcome } from '../../lifecycle/states.js';
import { ESME_ROK, sendAtEndOfTurn, statusName, type SmppLib } from './library.js';
import type { SmppConfig } from './options.js';
import { classifySubmitStatus } from './receipt.js';
import { RateMeter } from '../rate-meter.js';

/** What a submit resolves with: the SMSC's message id and the bind it went on. */
export interface SentSubmit {
  carrierId: string;
  bind: string;
}

interface QueuedSubmit {
  fields: Record<string, unknown>;
  resolve(sent: SentSubmit): void;
  reject(error: unknown): void;
  timer: NodeJS.Timeout;
}

interface InFlight {
  resolve(sent: SentSubmit): void;
  reject(error: unknown): void;
  timer: NodeJS.Timeout;
}

/**
 * The submits of one adapter waiting for a bind, a window slot and a permit. Every submit
 * settles: with the carrier's message id, or with a `DeliveryError` (permanent only when
 * the SMSC's status can never succeed).
 */
export class SubmitQueue {
  readonly #config: SmppConfig;
  readonly #pacer: SubmitPacer | null;
  readonly #jobs: QueuedSubmit[] = [];
  readonly #windows: SubmitWindow[] = [];
  readonly #wake = () => this.pump();
  #turn = 0;
  #closing = false;

  /** `pacer` paces every bind's sends together; `null` sends as fast as the windows allow. */
  constructor(config: SmppConfig, pacer: SubmitPacer | null) {
    this.#config = config;
    this.#pacer = pacer;
  }

  /** Adds a bind's window; it takes from this queue. */
  add(window: SubmitWindow): void {
    this.#windows.push(window);
  }

  /**
   * Queues one `submit_sm`; resolves with the `message_id` of its response and the bind it
   * went on. Rejects (retryably) when no bound session and window slot are found within
   * `waitTimeoutMs`.
   */
  submit(fields: Record<string, unknown>): Promise<SentSubmit> {
    if (this.#closing) return Promise.reject(new DeliveryError('SMPP adapter is closed'));
    return new Promise<SentSubmit>((resolve, reject) => {
      const job: QueuedSubmit = {
        fields,
        resolve,
        reject,
        timer: setTimeout(() => {
          const at = this.#jobs.indexOf(job);
          if (at >= 0) this.#jobs.splice(at, 1);
          const bound = this.#windows.some((window) => window.bound);
          const why = bound ? `no window slot free (window ${this.#config.window})` : 'not bound';
          reject(new DeliveryError(`SMPP submit waited ${this.#config.waitTimeoutMs} ms: ${why}`));
        }, this.#config.waitTimeoutMs),
      };
      job.timer.unref();
      this.#jobs.push(job);
      this.pump();
    });
  }

  /**
   * Lets the windows with room take the waiting submits: one each in turn, the least busy
   * first, so a burst spreads over every bound bind instead of filling one window first.
   * Array.prototype.sort is stable: among equally busy windows the rotation decides.
   */
  pump(): void {
    if (this.#windows.length === 1) {
      this.#windows[0]!.pump();
      return;
    }
    // Equally busy windows take turns being first, so a paced trickle spreads too.
    const first = this.#turn++ % this.#windows.length;
    const byLoad = [...this.#windows.slice(first), ...this.#windows.slice(0, first)].sort((a, b) => a.inFlight - b.inFlight);
    let took = true;
    while (took && this.#jobs.length > 0) {
      took = false;
      for (const window of byLoad) if (window.pumpOne()) took = true;
    }
  }

  /** True when a submit waits. */
  get waiting(): boolean {
    return this.#jobs.length > 0;
  }

  /**
   * The next submit, once the pacer gives a permit; `undefined` when none waits or the
   * permit is not free yet (the queue pumps again when it may be).
   */
  take(): QueuedSubmit | undefined {
    if (this.#jobs.length === 0) return undefined;
    if (this.#pacer && !this.#pacer.tryTake()) {
      this.#pacer.whenFree(this.#wake);
      return undefined;
    }
    const job = this.#jobs.shift();
    if (job) clearTimeout(job.timer);
    return job;
  }

  /** Refuses new submits and rejects the queued ones; those in flight await their response. */
  close(): void {
    this.#closing = true;
    this.#pacer?.close();
    for (const job of this.#jobs.splice(0)) {
      clearTimeout(job.timer);
      job.reject(new DeliveryError('SMPP adapter closed before the part was sent'));
    }
  }
}

/**
 * One bind's window: takes submits from the adapter's {@link SubmitQueue} while its bind is
 * bound and fewer than `window` await their response.
 */
export class SubmitWindow {
  readonly #lib: SmppLib;
  readonly #config: SmppConfig;
  readonly #queue: SubmitQueue;
  readonly #boundSession: () => Session | null;
  readonly #inFlight = new Map<number, InFlight>();
  readonly #bind: string;
  readonly #sent = new RateMeter();

  /** `boundSession` returns the session to send on, or null while the bind is not bound; `bind` names the bind in what its submits resolve with. */
  constructor(lib: SmppLib, config: SmppConfig, queue: SubmitQueue, boundSession: () => Session | null, bind: string) {
    this.#lib = lib;
    this.#config = config;
    this.#queue = queue;
    this.#boundSession = boundSession;
    this.#bind = bind;
    queue.add(this);
  }

  /** `submit_sm` sent a second over the last 10 s. */
  get sentPerSecond(): number {
    return this.#sent.perSecond();
  }

  /** True while its bind can send. */
  get bound(): boolean {
    return this.#boundSession() !== null;
  }

  /** Submits awaiting their response. */
  get inFlight(): number {
    return this.#inFlight.size;
  }

  /** Sends queued submits while bound, within the window and the pace. */
  pump(): void {
    while (this.pumpOne());
  }

  /** Sends one queued submit if bound, within the window and the pace; true if it did. */
  pumpOne(): boolean {
    const session = this.#boundSession();
    if (!session || !this.#queue.waiting || this.#inFlight.size >= this.#config.window) return false;
    const job = this.#queue.take();
    if (!job) return false;
    this.#send(session, job);
    return true;
  }

  /**
   * Rejects (retryably) every submit still awaiting its response, since the session it
   * went on is gone; returns how many there were.
   */
  sessionLost(): number {
    const lost = [...this.#inFlight.values()];
    this.#inFlight.clear();
    for (const flight of lost) {
      clearTimeout(flight.timer);
      flight.reject(new DeliveryError('SMPP connection lost before submit_sm_resp; the part may be resent'));
    }
    return lost.length;
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
    this.#sent.add();
    const sequence = pdu.sequence_number;
    const timer = setTimeout(() => {
      if (this.#inFlight.delete(sequence)) {
        job.reject(new DeliveryError(`SMPP submit_sm_resp not received within ${this.#config.responseTimeoutMs} ms`));
        this.#queue.pump();
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
      flight.resolve({ carrierId: response.message_id, bind: this.#bind });
    } else {
      flight.reject(this.#submitError(status));
    }
    this.#queue.pump();
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
}
