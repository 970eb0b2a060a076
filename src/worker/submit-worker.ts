/**
 * The submission worker: claims queued messages, submits each part to the carrier, and
 * records what happened. A retryable carrier error puts the message back with a delay; a
 * permanent one, or too many attempts, ends it.
 *
 * Two bounds, on purpose apart. `worker.concurrency` slots bound the submissions waiting for
 * the carrier. The worker holds up to {@link HELD_PER_SLOT} times as many messages: claimed
 * ahead, waiting for a slot, or having their submission recorded. A claim and a recording
 * each wait for a storage commit, which under a flood of requests takes tens of
 * milliseconds; when the slots covered those waits too, the commits, not the carrier, bounded
 * how fast messages went out (SQLite, 100-message requests: 1,900 finished a second).
 */
import type { DeliveryAdapter, OutgoingPart, SubmitAck } from '../delivery/contract.js';
import { DeliveryError } from '../delivery/contract.js';
import { normalizeCarrierId } from '../delivery/carrier-ids.js';
import type { Emit } from '../events.js';
import { outcome } from '../lifecycle/states.js';
import type { WorkerOptions } from '../options.js';
import { splitSms } from '../sms/segments.js';
import type { InsertLease, MessageRecord, NewMessage, Storage, Transition } from '../storage/contract.js';
import { QueuedRecord } from '../storage/queued-record.js';
import { retryDelay } from './backoff.js';

/** What the worker needs. */
export interface SubmitWorkerDeps {
  storage: Storage;
  delivery: DeliveryAdapter;
  emit: Emit;
  config: Required<WorkerOptions>;
  /** The lease owner id of this instance. */
  owner: string;
  now: () => number;
  /** Called with every transition, so the router can announce it and wake the DLR sender. */
  onTransition: (transition: Transition) => void;
}

/** The 8-bit concatenation reference of a message: stable across retries, from its ref. */
export function concatRefOf(ref: string): number {
  let hash = 0;
  for (let i = 0; i < ref.length; i++) hash = (hash * 31 + ref.charCodeAt(i)) >>> 0;
  return hash & 0xff;
}

/**
 * Messages the worker holds per slot. Four keep the carrier busy through a claim's commit
 * and keep a slow carrier's backlog short of the lease: a message that waits for a slot past
 * its lease is left for the next claim, not sent.
 */
export const HELD_PER_SLOT = 4;

/** Claims and submits queued messages until closed. */
export class SubmitWorker {
  readonly #deps: SubmitWorkerDeps;
  /** The messages this worker holds, from claim (or hand-off) until their work is recorded. */
  readonly #inFlight = new Set<Promise<void>>();
  /** Submissions waiting for the carrier now: at most `concurrency`. */
  #atCarrier = 0;
  /** Parts waiting for a slot, first come first served. */
  readonly #slotQueue: (() => void)[] = [];
  #timer: NodeJS.Timeout | null = null;
  #polling: Promise<void> | null = null;
  /** Slots promised by {@link SubmitWorker.reserve} to messages being stored right now. */
  #reserved = 0;
  /** Messages handed over by {@link SubmitWorker.adopt}, submitted at the end of the turn. */
  #adopted: { message: NewMessage; leaseEnd: number }[] = [];
  #adopting: NodeJS.Immediate | null = null;
  /** The last claim filled every free slot: more work may be waiting for room. */
  #backlog = false;
  #wakeRequested = false;
  #started = false;
  #closed = false;

  constructor(deps: SubmitWorkerDeps) {
    this.#deps = deps;
  }

  /** Starts polling. */
  start(): void {
    this.#started = true;
    this.wake();
  }

  /**
   * Takes room for `count` messages about to be stored, and the lease to store them under:
   * stored that way, they are this worker's at once ({@link SubmitWorker.adopt}), without a
   * claim. `null` when there is not room for all of them (or the worker is not running):
   * they are then stored unleased and claimed like any other.
   */
  reserve(count: number): InsertLease | null {
    if (!this.#started || this.#closed || this.#room() < count) return null;
    this.#reserved += count;
    return { owner: this.#deps.owner, until: this.#deps.now() + this.#deps.config.leaseMs };
  }

  /** Gives back the room of a {@link SubmitWorker.reserve} whose messages were not stored. */
  unreserve(count: number): void {
    this.#reserved -= count;
  }

  /**
   * Starts submitting messages stored under a lease {@link SubmitWorker.reserve} gave, at
   * the end of this turn of the event loop: the requests of one turn are answered first and
   * their messages then submitted together, as a claim would have (interleaving the two,
   * one request at a time, measured a few percent more CPU per request).
   */
  adopt(messages: readonly NewMessage[], lease: InsertLease): void {
    for (const message of messages) this.#adopted.push({ message, leaseEnd: lease.until });
    this.#adopting ??= setImmediate(() => this.#submitAdopted());
  }

  #submitAdopted(): void {
    this.#adopting = null;
    const adopted = this.#adopted;
    this.#adopted = [];
    this.#reserved -= adopted.length;
    // Closed meanwhile: they stay stored, and any instance claims them once the lease ends.
    if (this.#closed) return;
    for (const { message, leaseEnd } of adopted) this.#track(this.#submit(new QueuedRecord(message), leaseEnd));
  }

  /** How many more messages this worker may hold. */
  #room(): number {
    return this.#deps.config.concurrency * HELD_PER_SLOT - this.#inFlight.size - this.#reserved;
  }

  /** Waits for a slot at the carrier. */
  async #takeSlot(): Promise<void> {
    if (this.#atCarrier < this.#deps.config.concurrency) this.#atCarrier++;
    else await new Promise<void>((resolve) => this.#slotQueue.push(resolve));
  }

  /** Hands the slot to the next part waiting, or frees it. */
  #giveSlot(): void {
    const next = this.#slotQueue.shift();
    if (next !== undefined) next();
    else this.#atCarrier--;
  }

  /** Looks for work now (new messages were stored). Cheap to call often. */
  wake(): void {
    if (this.#closed) return;
    if (this.#polling) {
      this.#wakeRequested = true;
      return;
    }
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    this.#polling = this.#poll();
  }

  /**
   * Stops claiming and waits for the messages it holds to be submitted and recorded, those
   * still waiting for a slot too (a graceful restart leaves none to wait out its lease);
   * leaves no timer behind.
   */
  async close(): Promise<void> {
    // Messages handed over this turn are submitted with the rest in flight, not left behind.
    if (this.#adopting !== null) {
      clearImmediate(this.#adopting);
      this.#submitAdopted();
    }
    this.#closed = true;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    // A claim under way still hands its messages to #submit; wait for it, then for them.
    await this.#polling;
    while (this.#inFlight.size > 0) await Promise.allSettled([...this.#inFlight]);
  }

  async #poll(): Promise<void> {
    // Yield before anything else: wake() stores this promise in #polling and the end of
    // this method clears it. A poll with no room to claim used to end before that store,
    // leaving #polling set for good, and the worker never claimed again.
    await Promise.resolve();
    const { storage, config, owner, now, emit } = this.#deps;
    let claimedFull = false;
    try {
      const room = this.#room();
      if (room > 0) {
        const claimedAt = now();
        const messages = await storage.claimMessages({ owner, limit: room, leaseMs: config.leaseMs, now: claimedAt });
        claimedFull = messages.length === room;
        this.#backlog = claimedFull;
        for (const message of messages) this.#track(this.#submit(message, claimedAt + config.leaseMs));
      }
    } catch (error) {
      emit('error', { error, source: 'storage' });
    }
    this.#polling = null;
    if (this.#closed) return;
    // A full claim means more may be waiting: go again as soon as there is room.
    if (this.#wakeRequested || (claimedFull && this.#room() > 0)) {
      this.#wakeRequested = false;
      setImmediate(() => this.wake());
    } else {
      this.#timer = setTimeout(() => this.wake(), config.pollIntervalMs);
      this.#timer.unref();
    }
  }

  #track(work: Promise<void>): void {
    this.#inFlight.add(work);
    void work.finally(() => {
      this.#inFlight.delete(work);
      // A finished submission makes room: fetch more if the last claim was full. (New
      // messages wake the worker themselves; an idle poll per submission cost a claim each.)
      if (!this.#closed && this.#backlog) this.wake();
    });
  }

  /** Submits the parts of `message` not yet submitted, while its lease (until `leaseEnd`) holds. */
  async #submit(message: MessageRecord, leaseEnd: number): Promise<void> {
    const { storage, delivery, emit, now } = this.#deps;
    const texts = message.smsCount === 1 ? [message.text] : splitSms(message.text);
    const concatRef = concatRefOf(message.ref);
    try {
      for (const part of message.parts) {
        if (part.carrierId !== null) continue;
        const outgoing: OutgoingPart = {
          ref: message.ref,
          principalId: message.principalId,
          profileCode: message.profileCode,
          sender: message.sender,
          recipient: message.recipient,
          text: message.text,
          partText: texts[part.index] ?? '',
          index: part.index,
          count: message.smsCount,
          concatRef,
          encoding: message.encoding,
          messageType: message.messageType,
          reqType: message.reqType,
        };
        await this.#takeSlot();
        let ack: SubmitAck;
        try {
          // Past its lease the message may be another instance's now: submitting more parts
          // would send them twice. What is left goes out with the next claim.
          if (now() >= leaseEnd) return;
          ack = await delivery.submit(outgoing);
        } finally {
          this.#giveSlot();
        }
        const result = await storage.recordSubmission(message.ref, part.index, normalizeCarrierId(ack.carrierId), now());
        if (result.kind === 'submitted') {
          emit('message.submitted', { message: result.transition.message });
          this.#deps.onTransition(result.transition);
        }
        if (result.kind === 'stale') return;
      }
    } catch (error) {
      await this.#failed(message, error).catch((storageError: unknown) =>
        emit('error', { error: storageError, source: 'storage', ref: message.ref }),
      );
    }
  }

  async #failed(message: MessageRecord, error: unknown): Promise<void> {
    const { storage, emit, config, now } = this.#deps;
    const carrierError = DeliveryError.is(error) ? error : null;
    const attempt = message.attempts + 1;
    if (carrierError?.permanent) {
      const ended = carrierError.outcome ?? outcome('rejected', 'rejected', carrierError.message);
      const transition = await storage.finish(message.ref, ended, now());
      if (transition) this.#deps.onTransition(transition);
      return;
    }
    if (attempt >= config.maxAttempts) {
      const reason = `Gave up after ${attempt} attempts: ${errorText(error)}`;
      const transition = await storage.finish(message.ref, outcome('failed', 'unknown', reason), now());
      if (transition) this.#deps.onTransition(transition);
      return;
    }
    const delay = retryDelay(attempt, config.retryBaseMs, config.retryMaxMs, carrierError?.retryAfterMs ?? null);
    const nextAttemptAt = now() + delay;
    await storage.reschedule(message.ref, nextAttemptAt, errorText(error), now());
    emit('message.retrying', { ref: message.ref, attempt, nextAttemptAt, error });
  }
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
