/**
 * The submission worker: claims queued messages, submits each part to the carrier, and
 * records what happened. A retryable carrier error puts the message back with a delay; a
 * permanent one, or too many attempts, ends it.
 *
 * Two bounds, on purpose apart. `worker.concurrency` slots bound the submissions waiting for
 * the carrier. The worker holds up to {@link HELD_PER_SLOT} times as many messages: claimed
 * ahead, waiting for a slot, or having their submission recorded. A claim and a recording
 * each wait for a storage commit, which under a flood of requests takes tens of
 * milliseconds; were the slots to cover those waits too, the commits, not the carrier, would
 * bound how fast messages go out (SQLite, 100-message requests: 1,900 finished a second).
 */
import type { DeliveryAdapter, OutgoingPart, SubmitAck } from '../delivery/contract.js';
import { DeliveryError } from '../delivery/contract.js';
import { normalizeCarrierId } from '../delivery/carrier-ids.js';
import type { Emit } from '../observe/events.js';
import { SPAN_NAMES, type MessageTracing } from '../observe/tracing.js';
import { outcome } from '../lifecycle/states.js';
import type { WorkerOptions } from './options.js';
import { splitSms } from '../sms/segments.js';
import { concatRefOf, outgoingPart } from './outgoing-part.js';
import type { InsertLease, MessageRecord, NewMessage, Priority, Storage, SubmissionResult, Transition } from '../storage/contract.js';
import { QueuedRecord } from '../ledger/queued-record.js';
import { validityElapsed, VALIDITY_ELAPSED } from '../lifecycle/timing.js';
import { retryDelay } from './backoff.js';
import { ClaimLoop } from '../outbox/claim-loop.js';
import { FairSlotQueue } from './fair-slots.js';
import { handOffSpans, tracedClaim } from './claim-spans.js';
import type { MessageHandOff } from '../outbox/hand-off.js';

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
  /**
   * Whether a message's recipient opted out of its sender, asked right before its first part
   * is submitted for the messages that honour opt-outs (premium ones); absent: never asked.
   */
  optedOut?: (message: MessageRecord) => Promise<boolean>;
  /** OpenTelemetry: a span per claim of a message and per part submitted, in its message's trace; absent or `null`: none. */
  tracing?: MessageTracing | null;
}

/** How a message to a number opted out of its sender ends. */
const OPTED_OUT = outcome('rejected', 'opted_out');

/** The bind and route the adapter said took a part (`SubmitAck`), passed on with `message.submitted`. */
type Carried = Pick<SubmitAck, 'bind' | 'route'>;


/**
 * Messages the worker holds per slot. Four keep the carrier busy through a claim's commit
 * and keep a slow carrier's backlog short of the lease: a message that waits for a slot past
 * its lease is left for the next claim, not sent.
 */
export const HELD_PER_SLOT = 4;

/**
 * For an adapter that paces its submits (`DeliveryAdapter.submitsPerSecond`): the seconds
 * of submits given slots at the carrier. A part in a slot may wait in the adapter's own
 * queue for its pace, where nothing passes it; the parts waiting for a slot are served in
 * fair order (fair-slots.ts). So a twentieth of a second of slots keeps the bind busy while
 * a one-time password claimed now waits behind at most that much of a campaign.
 */
const PACED_SLOT_SECONDS = 0.05;

/** The slots at the carrier: `worker.concurrency`, fewer for an adapter that paces itself. */
export function carrierSlots(concurrency: number, submitsPerSecond: number | undefined): number {
  if (submitsPerSecond === undefined || !(submitsPerSecond > 0)) return concurrency;
  return Math.min(concurrency, Math.max(1, Math.ceil(submitsPerSecond * PACED_SLOT_SECONDS)));
}

/** Claims and submits queued messages until closed; takes messages handed over by the send endpoints. */
export class SubmitWorker implements MessageHandOff {
  readonly #deps: SubmitWorkerDeps;
  readonly #loop: ClaimLoop<MessageRecord>;
  /** Submissions waiting for the carrier now: at most {@link SubmitWorker.#slots}. */
  #atCarrier = 0;
  /** Submissions that may wait for the carrier at once (`worker.concurrency`, less for a paced adapter). */
  readonly #slots: number;
  /** Messages held at most (claimed or handed over), transactional ones past it aside. */
  readonly #capacity: number;
  /** Parts waiting for a slot, first come first served. */
  readonly #slotQueue = new FairSlotQueue();
  /** Messages handed over by {@link SubmitWorker.stored}, submitted at the end of the turn. */
  #adopted: { message: NewMessage; leaseEnd: number }[] = [];
  #adopting: NodeJS.Immediate | null = null;
  /** Parts sent to the carrier whose carrier id is not recorded yet. */
  readonly #unrecorded = new Set<Promise<SubmissionResult>>();

  constructor(deps: SubmitWorkerDeps) {
    this.#deps = deps;
    const { storage, config, owner } = deps;
    this.#slots = carrierSlots(config.concurrency, deps.delivery.submitsPerSecond);
    this.#capacity = config.concurrency * HELD_PER_SLOT;
    const claim = (limit: number, now: number) => storage.claimMessages({ owner, limit, leaseMs: config.leaseMs, now });
    this.#loop = new ClaimLoop<MessageRecord>({
      capacity: this.#capacity,
      pollIntervalMs: config.pollIntervalMs,
      claim: deps.tracing == null ? claim : tracedClaim(deps.tracing, claim),
      run: (message, claimedAt) => this.#submit(message, claimedAt + config.leaseMs),
      onError: (error) => deps.emit('error', { error, source: 'storage' }),
      now: deps.now,
    });
  }

  /** Starts claiming. */
  start(): void {
    this.#loop.start();
  }

  /** Looks for work soon (new messages were stored). Cheap to call often. */
  wake(): void {
    this.#loop.wake();
  }

  /**
   * Takes room for `count` messages about to be stored, and the lease to store them under:
   * stored that way, they are this worker's at once ({@link SubmitWorker.stored}), without a
   * claim. `null` when there is not room for all of them (or the worker is not running):
   * they are then stored unleased and claimed like any other.
   */
  lease(count: number, priority: Priority): InsertLease | null {
    // Transactional messages are taken even past the room, up to as much again: stored
    // unleased they would wait for a claim while the held bulk messages took the slots
    // freed meanwhile; held, they go first in the slot queue.
    const overdraft = priority === 'transactional' ? this.#capacity : 0;
    if (!this.#loop.reserve(count, overdraft)) return null;
    return { owner: this.#deps.owner, until: this.#deps.now() + this.#deps.config.leaseMs };
  }

  /** Gives back the room of a {@link SubmitWorker.lease} whose messages were not stored. */
  notStored(count: number, lease: InsertLease | null): void {
    if (lease !== null) this.#loop.release(count);
  }

  /**
   * Takes messages just stored. Those stored under a lease {@link SubmitWorker.lease} gave
   * are submitted at the end of this turn of the event loop: the requests of one turn are
   * answered first and their messages then submitted together, as a claim would have
   * (interleaving the two, one request at a time, costs a few percent more CPU per
   * request). Unleased ones wake the claim loop.
   */
  stored(messages: readonly NewMessage[], lease: InsertLease | null): void {
    if (lease === null) {
      this.#loop.wake();
      return;
    }
    for (const message of messages) this.#adopted.push({ message, leaseEnd: lease.until });
    // A transactional message takes its place in the slot queue now: until the end of the
    // turn, a slot freed by the carrier would go to a held bulk message before it.
    if (messages[0]?.priority === 'transactional') {
      if (this.#adopting !== null) clearImmediate(this.#adopting);
      this.#submitAdopted();
      return;
    }
    this.#adopting ??= setImmediate(() => this.#submitAdopted());
  }

  #submitAdopted(): void {
    this.#adopting = null;
    const adopted = this.#adopted;
    this.#adopted = [];
    this.#loop.release(adopted.length);
    // Closed meanwhile: they stay stored, and any instance claims them once the lease ends.
    if (!this.#loop.running) return;
    const records = adopted.map(({ message }) => new QueuedRecord(message));
    if (this.#deps.tracing != null) handOffSpans(this.#deps.tracing, records);
    for (let i = 0; i < records.length; i++) this.#loop.hold(this.#submit(records[i]!, adopted[i]!.leaseEnd));
  }

  /** Waits for a slot at the carrier. */
  async #takeSlot(message: MessageRecord): Promise<void> {
    if (this.#atCarrier < this.#slots) this.#atCarrier++;
    else await new Promise<void>((resolve) => this.#slotQueue.push(message.priority ?? 'bulk', message.principalId, resolve));
  }

  /** Hands the slot to the next part waiting, or frees it. */
  #giveSlot(): void {
    const next = this.#slotQueue.shift();
    if (next !== undefined) next();
    else this.#atCarrier--;
  }

  /**
   * Resolves once every part this worker has sent to the carrier so far is recorded (or
   * failed). A receipt can only be for a part already sent, so one that matches nothing,
   * or only a finished part, after this is not for a submission of this instance still
   * being recorded (see `ReceiptHandler`).
   */
  async submissionsRecorded(): Promise<void> {
    if (this.#unrecorded.size > 0) await Promise.allSettled([...this.#unrecorded]);
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
    await this.#loop.stop();
    await this.#loop.drain();
  }

  /** Submits the parts of `message` not yet submitted, while its lease (until `leaseEnd`) holds. */
  async #submit(message: MessageRecord, leaseEnd: number): Promise<void> {
    const { emit, now } = this.#deps;
    const texts = message.smsCount === 1 ? [message.text] : splitSms(message.text);
    const concatRef = concatRefOf(message.ref);
    // Whether the carrier has any part of it: then the rest follow, whatever the time.
    let partSent = message.parts.some((part) => part.carrierId !== null);
    try {
      for (const part of message.parts) {
        if (part.carrierId !== null) continue;
        const outgoing: OutgoingPart = outgoingPart(message, part.index, texts, concatRef);
        await this.#takeSlot(message);
        // Past its lease the message may be another instance's now: submitting more parts
        // would send them twice. What is left goes out with the next claim.
        if (now() >= leaseEnd) {
          this.#giveSlot();
          return;
        }
        // The last look before the carrier: a message whose validity ended while it waited
        // (for a claim, a slot, a carrier that was down) is never sent, unless a part of it
        // already was.
        if (message.validUntil != null) {
          if (!partSent && validityElapsed(message.validUntil, now())) {
            this.#giveSlot();
            const transition = await this.#deps.storage.finish(message.ref, VALIDITY_ELAPSED, now());
            if (transition) this.#deps.onTransition(transition);
            return;
          }
          outgoing.validitySeconds = Math.max(1, Math.ceil((message.validUntil - now()) / 1000));
        }
        // With the slot taken, right before the first part: an opt-out recorded while the
        // message waited still stops it (a part already at the carrier cannot be called back).
        if (!partSent && message.endpoint === 'premium' && (await this.#optedOut(message))) {
          const transition = await this.#deps.storage.finish(message.ref, OPTED_OUT, now());
          if (transition) this.#deps.onTransition(transition);
          return;
        }
        const carried: Carried = {};
        const step = this.#submitAndRecord(message.ref, part.index, outgoing, message.traceparent, carried);
        this.#unrecorded.add(step);
        const forget = () => void this.#unrecorded.delete(step);
        step.then(forget, forget);
        const result = await step;
        if (result.kind === 'submitted') {
          emit('message.submitted', { message: result.transition.message, ...carried });
          this.#deps.onTransition(result.transition);
        }
        if (result.kind === 'stale') return;
        partSent = true;
      }
    } catch (error) {
      await this.#failed(message, error).catch((storageError: unknown) =>
        emit('error', { error: storageError, source: 'storage', ref: message.ref }),
      );
    }
  }

  /** Whether `message`'s recipient opted out of its sender; gives the slot back when so, or when the lookup fails. */
  async #optedOut(message: MessageRecord): Promise<boolean> {
    if (this.#deps.optedOut === undefined) return false;
    let optedOut: boolean;
    try {
      optedOut = await this.#deps.optedOut(message);
    } catch (error) {
      this.#giveSlot();
      throw error;
    }
    if (optedOut) this.#giveSlot();
    return optedOut;
  }

  /**
   * Submits one part (its slot taken) and records its carrier id; traced under `traceparent`,
   * its message's. Notes in `carried` the bind and route the adapter says took it.
   */
  async #submitAndRecord(ref: string, index: number, outgoing: OutgoingPart, traceparent: string | null | undefined, carried: Carried): Promise<SubmissionResult> {
    const tracing = this.#deps.tracing;
    const span = tracing == null || traceparent == null ? null : tracing.child(SPAN_NAMES.submit, traceparent, { 'sms.message_ref': ref, 'sms.part_index': index }, 'CLIENT');
    let ack: SubmitAck;
    try {
      ack = await this.#deps.delivery.submit(outgoing);
    } catch (error) {
      span?.end(error);
      throw error;
    } finally {
      this.#giveSlot();
    }
    if (ack.bind !== undefined) carried.bind = ack.bind;
    if (ack.route !== undefined) carried.route = ack.route;
    if (span === null) return this.#deps.storage.recordSubmission(ref, index, normalizeCarrierId(ack.carrierId), this.#deps.now());
    const carrierId = normalizeCarrierId(ack.carrierId);
    span.set({ 'sms.carrier_id': carrierId });
    // Before the recording: the part's receipt may come as soon as its carrier id is stored.
    if (outgoing.count > 1) tracing!.parts.note(ref, traceparent!);
    try {
      const result = await this.#deps.storage.recordSubmission(ref, index, carrierId, this.#deps.now());
      span.end();
      return result;
    } catch (error) {
      span.end(error);
      throw error;
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
