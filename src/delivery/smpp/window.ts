/**
 * The submit window of one bind: parts wait in a queue until the bind is bound, a window
 * slot is free and the TPS cap allows, then go out as `submit_sm`; each is settled by its
 * `submit_sm_resp` or given up after `responseTimeoutMs`. Kept apart from the bind's
 * connection state machine, which only tells the window which session is usable and when
 * that session is lost.
 */
import type { PDU, Session } from 'smpp';
import { DeliveryError } from '../contract.js';
import { outcome } from '../../lifecycle/states.js';
import { ESME_ROK, sendAtEndOfTurn, statusName, type SmppLib } from './library.js';
import type { SmppConfig } from './options.js';
import { classifySubmitStatus } from './receipt.js';

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
 * Queues `submit_sm` fields and sends them within the window and the TPS cap of the
 * config. Every submit settles: with the carrier's message id, or with a
 * `DeliveryError` (permanent only when the SMSC's status can never succeed).
 */
export class SubmitWindow {
  readonly #lib: SmppLib;
  readonly #config: SmppConfig;
  readonly #boundSession: () => Session | null;
  #closing = false;
  #paceTimer: NodeJS.Timeout | null = null;
  #nextSendAt = 0;
  readonly #queue: QueuedSubmit[] = [];
  readonly #inFlight = new Map<number, InFlight>();

  /** `boundSession` returns the session to send on, or null while the bind is not bound. */
  constructor(lib: SmppLib, config: SmppConfig, boundSession: () => Session | null) {
    this.#lib = lib;
    this.#config = config;
    this.#boundSession = boundSession;
  }

  /**
   * Queues one `submit_sm`; resolves with the `message_id` of its response. Rejects
   * (retryably) when no bound session and window slot are found within `waitTimeoutMs`.
   */
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
          const why = this.#boundSession() ? `no window slot free (window ${this.#config.window})` : 'not bound';
          reject(new DeliveryError(`SMPP submit waited ${this.#config.waitTimeoutMs} ms: ${why}`));
        }, this.#config.waitTimeoutMs),
      };
      job.timer.unref();
      this.#queue.push(job);
      this.pump();
    });
  }

  /** Sends queued submits while bound, within the window and the TPS cap. */
  pump(): void {
    let session: Session | null;
    while ((session = this.#boundSession()) && this.#queue.length > 0 && this.#inFlight.size < this.#config.window) {
      const now = Date.now();
      if (now < this.#nextSendAt) {
        if (!this.#paceTimer) {
          this.#paceTimer = setTimeout(() => {
            this.#paceTimer = null;
            this.pump();
          }, this.#nextSendAt - now);
          this.#paceTimer.unref();
        }
        return;
      }
      if (Number.isFinite(this.#config.tps)) {
        const interval = 1000 / this.#config.tps;
        // A pace timer fires a little late. Counted from when the send was due, not from
        // now, the lateness is made up by the next sends and the rate stays at tps (from
        // now it lost ~10% at 200 a second); after a longer idle the pace restarts from
        // now, so no burst makes up for the idle time.
        this.#nextSendAt = (now - this.#nextSendAt > interval ? now : this.#nextSendAt) + interval;
      }
      const job = this.#queue.shift();
      if (job) this.#send(session, job);
    }
  }

  /**
   * Rejects (retryably) every submit still awaiting its response, since the session it
   * went on is gone; returns how many there were.
   */
  sessionLost(): number {
    this.#stopPacing();
    const lost = [...this.#inFlight.values()];
    this.#inFlight.clear();
    for (const flight of lost) {
      clearTimeout(flight.timer);
      flight.reject(new DeliveryError('SMPP connection lost before submit_sm_resp; the part may be resent'));
    }
    return lost.length;
  }

  /** Refuses new submits and rejects the queued ones; those in flight await their response. */
  close(): void {
    this.#closing = true;
    this.#stopPacing();
    for (const job of this.#queue.splice(0)) {
      clearTimeout(job.timer);
      job.reject(new DeliveryError('SMPP adapter closed before the part was sent'));
    }
  }

  #stopPacing(): void {
    if (this.#paceTimer) clearTimeout(this.#paceTimer);
    this.#paceTimer = null;
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
        this.pump();
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
    this.pump();
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
