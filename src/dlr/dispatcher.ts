/**
 * The delivery report sender: claims due reports from storage, POSTs them, records each
 * attempt and tells the host through `dlr.*` events.
 *
 * Reports live in storage, not here: a report claimed but not finished when the process
 * stops is claimed again when its lease ends, so a restart resumes every pending report
 * (a graceful `close()` hands back those not started, so they need not wait for that).
 *
 * Fairness: at most `concurrency` attempts run at once, and at most `perHostConcurrency`
 * to one host. A claimed report whose host is at its limit waits in that host's queue.
 * A queue holds only what its host can start inside the lease, judged from the host's
 * recent answer times: a fast receiver's queue is long (one URL for every report is the
 * common case, and it drains in milliseconds), a slow one's short. A report claimed beyond
 * that is handed back for {@link DEFER_MS} (`Storage.deferCallbacks`), so the next claims
 * reach other hosts' reports and it is claimed again a second later. A slow host thus
 * delays its own reports, never other hosts'. At most {@link HELD_PER_SLOT} x
 * `concurrency` reports are held at once (plus those handed over by receipts stored while
 * the last room was being taken), and a host whose pace is not known yet (fewer than
 * `perHostConcurrency` answers) queues at most half of that.
 *
 * The hand-off: a receipt that ends a message, applied while there is room, stores its
 * report leased to this instance ({@link CallbackDispatcher.reportLease}), and the router
 * hands it straight over ({@link CallbackDispatcher.handOver}): no claim reads it back
 * from storage. Without room, the report is stored unleased and claimed like any other.
 */
import type { Emit } from '../events.js';
import type { CallbackAttempt, DueCallback, InsertLease, MessageRecord, LeasedReport, Storage } from '../storage/contract.js';
import type { DlrConfig } from './options.js';
import { buildDlrPayload } from './payload.js';
import { CallbackSender, type PostResult } from './post.js';
import { nextAttemptDelay, verdictOf } from './schedule.js';
import { signWebhook } from './sign.js';
import { callbackUrlProblem } from './address-guard.js';
import { callbackTarget } from './callback-target.js';

/** Claims per poll at most, so a backlog of one slow host cannot keep a poll busy for long. */
const MAX_CLAIMS_PER_POLL = 16;

/**
 * How long a claimed report whose host's queue is full is handed back for, ms: other
 * hosts' reports are claimed meanwhile, and it is claimed again soon, not after a lease.
 */
const DEFER_MS = 1_000;

/** Reports held (running or queued) per unit of `concurrency`: bounds memory. */
const HELD_PER_SLOT = 16;

/**
 * A host's answer time before it has answered, ms. Optimistic: most receivers answer fast,
 * and a slow one is found out within its first answers (its queue then shrinks, and what
 * it cannot start inside the lease is left to the lease).
 */
const FIRST_GUESS_MS = 50;

/** The largest share of the held reports a host whose pace is not known yet may queue. */
const MAX_HOST_SHARE = 0.5;

/** What the dispatcher needs from the router. */
export interface CallbackDispatcherOptions {
  /** Where pending reports live. */
  storage: Storage;
  /** Emits `dlr.*` and `error` events. */
  emit: Emit;
  /** Resolved options (see `resolveDlrOptions`). */
  config: DlrConfig;
  /** This instance's claim owner id. */
  owner: string;
  /** The clock, epoch ms; default `Date.now`. Also gives the `webhook-timestamp`. */
  now?: () => number;
  /** Random numbers in [0, 1) for jitter; default `Math.random`. */
  random?: () => number;
}

/** A claimed report and when it was claimed (its lease runs from then). */
interface Claimed {
  due: DueCallback;
  claimedAt: number;
}

/** One destination host's running attempts, the claimed reports waiting for a slot, and its pace. */
interface HostLane {
  active: number;
  waiting: Claimed[];
  /** Moving average of its attempts' durations, ms. */
  averageMs: number;
  /** Attempts finished, so far: the average means little before a few. */
  answers: number;
}

/** The result of an attempt that was refused before anything was sent. */
function unsent(error: string): PostResult {
  return { statusCode: null, error, durationMs: 0, retryAfterMs: null };
}


/**
 * Sends delivery reports from storage until closed. Create one per router; call
 * {@link CallbackDispatcher.start} once, {@link CallbackDispatcher.wake} when a report has
 * just become due, and {@link CallbackDispatcher.close} to stop.
 */
export class CallbackDispatcher {
  readonly #storage: Storage;
  readonly #emit: Emit;
  readonly #config: DlrConfig;
  readonly #owner: string;
  readonly #now: () => number;
  readonly #random: () => number;
  readonly #sender: CallbackSender;
  readonly #lanes = new Map<string, HostLane>();
  readonly #inFlight = new Set<Promise<void>>();
  #active = 0;
  #waiting = 0;
  #timer: NodeJS.Timeout | undefined;
  #polling: Promise<void> | null = null;
  #pollAgain = false;
  #wakeScheduled = false;
  /** Reports to hand back at the end of this turn (see #handBack). */
  readonly #handingBack: string[] = [];
  /** Reports that came in during close, to hand back before it ends (see close()). */
  #leftAtClose: string[] | null = null;
  /** True when the last claim may have left due reports behind. */
  #backlog = false;
  #started = false;
  #closed = false;
  #closing: Promise<void> | null = null;

  constructor(options: CallbackDispatcherOptions) {
    this.#storage = options.storage;
    this.#emit = options.emit;
    this.#config = options.config;
    this.#owner = options.owner;
    this.#now = options.now ?? Date.now;
    this.#random = options.random ?? Math.random;
    this.#sender = new CallbackSender({
      allow: this.#config.allowance,
      resolve: this.#config.resolve,
      connectionsPerHost: this.#config.perHostConcurrency,
    });
  }

  /** Starts polling storage every `pollIntervalMs` (the timer does not keep the process alive). */
  start(): void {
    if (this.#started || this.#closed) return;
    this.#started = true;
    this.#schedule(0);
  }

  /**
   * Polls soon: a report has just become due. Harmless when nothing is. The wakes of one
   * turn of the event loop make one poll (a router wakes it with every message that ends),
   * and while a batch's worth of room is not free the poll is left to the attempts that
   * free it: a claim walks the reports held, so claiming one at a time cost a walk per report.
   */
  wake(): void {
    if (!this.#started || this.#closed || this.#wakeScheduled) return;
    this.#wakeScheduled = true;
    setImmediate(() => {
      this.#wakeScheduled = false;
      if (this.#room() < this.#refillAt()) this.#backlog = true;
      else void this.#poll();
    });
  }

  /**
   * A lease under which a report created now may be handed straight to this dispatcher
   * (`PartReceipt.reportLease`), or `undefined` when it is not running or holds all it may:
   * the report is then stored unleased and claimed as usual.
   */
  reportLease(now: number): InsertLease | undefined {
    if (!this.#started || this.#closed || this.#room() <= 0) return undefined;
    return { owner: this.#owner, until: now + this.#config.leaseMs };
  }

  /**
   * Sends a report that was stored leased to this dispatcher ({@link reportLease}), as if
   * claimed when its lease began: no claim reads it back. It is held even if the room
   * filled while its receipt was being stored (so the reports held may pass their bound by
   * the receipts stored at once, which a lease was given to): handing it back would cost a
   * storage write now and a claim later. Only what its host's queue cannot take is handed
   * back, as a claim does.
   */
  handOver(report: LeasedReport, message: MessageRecord): void {
    if (this.#closed) {
      // During close: handed back with the rest. After it: left to its lease (the storage
      // may be closed by then).
      this.#leftAtClose?.push(report.uid);
      return;
    }
    const claimed: Claimed = { due: { uid: report.uid, attempts: 0, message }, claimedAt: report.until - this.#config.leaseMs };
    if (!this.#admit(claimed)) this.#handBack(report.uid);
  }

  /**
   * Hands a held report back without an attempt, claimable again in {@link DEFER_MS}. The
   * hand-backs of one turn of the event loop are one storage call: when receipts outrun a
   * receiver, many reports of a burst come back this way.
   */
  #handBack(uid: string): void {
    this.#handingBack.push(uid);
    if (this.#handingBack.length > 1) return;
    setImmediate(() => {
      const uids = this.#handingBack.splice(0);
      this.#storage.deferCallbacks(uids, this.#now() + DEFER_MS).catch((error: unknown) => this.#emit('error', { error, source: 'dlr' }));
    });
  }

  /**
   * Stops polling and waits for the attempts in flight (each ends within `timeoutMs`).
   * Reports held but not started (waiting for a slot, claimed or handed over meanwhile)
   * are handed back, claimable at once: a graceful restart does not hold them for a whole
   * lease (`leaseMs`, 35 s by default). Leaves no timer or socket.
   */
  close(): Promise<void> {
    return (this.#closing ??= this.#shutDown());
  }

  async #shutDown(): Promise<void> {
    this.#closed = true;
    this.#leftAtClose = [];
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#polling;
    const now = this.#now();
    for (const lane of this.#lanes.values()) {
      // One whose lease is (nearly) over may be another instance's by now: handing it back
      // would cut that instance's lease short, so it is left alone.
      for (const claimed of lane.waiting.splice(0)) if (this.#canFinishInLease(claimed, now)) this.#leftAtClose.push(claimed.due.uid);
    }
    this.#waiting = 0;
    // Handed back now, so other instances take them while the attempts in flight end;
    // what receipts hand over meanwhile goes back after those.
    await this.#handBackLeftAtClose();
    while (this.#inFlight.size > 0) await Promise.allSettled([...this.#inFlight]);
    await this.#handBackLeftAtClose();
    this.#leftAtClose = null;
    await this.#sender.close();
  }

  /** Hands back, claimable at once, the reports {@link close} has collected so far. */
  async #handBackLeftAtClose(): Promise<void> {
    const uids = this.#leftAtClose?.splice(0) ?? [];
    if (uids.length === 0) return;
    await this.#storage.deferCallbacks(uids, this.#now()).catch((error: unknown) => this.#emit('error', { error, source: 'dlr' }));
  }

  #schedule(delay: number): void {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => void this.#poll(), delay);
    this.#timer.unref();
  }

  #poll(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    if (this.#polling !== null) {
      this.#pollAgain = true;
      return this.#polling;
    }
    this.#polling = this.#claimAll().finally(() => {
      this.#polling = null;
      if (!this.#closed) this.#schedule(this.#config.pollIntervalMs);
    });
    return this.#polling;
  }

  async #claimAll(): Promise<void> {
    try {
      for (let round = 0; round < MAX_CLAIMS_PER_POLL && !this.#closed; round++) {
        this.#pollAgain = false;
        const room = this.#room();
        if (room <= 0) {
          this.#backlog = true;
          return;
        }
        const limit = Math.min(this.#config.batchSize, room);
        const now = this.#now();
        const claimed = await this.#storage.claimCallbacks({
          owner: this.#owner,
          limit,
          leaseMs: this.#config.leaseMs,
          now,
        });
        this.#backlog = claimed.length >= limit;
        // Claimed during close: handed back by close() with the reports it finds waiting.
        if (this.#closed) {
          for (const due of claimed) this.#leftAtClose?.push(due.uid);
          return;
        }
        const deferred = claimed.filter((due) => !this.#admit({ due, claimedAt: now })).map((due) => due.uid);
        if (deferred.length > 0) await this.#storage.deferCallbacks(deferred, now + DEFER_MS);
        if (!this.#backlog && !this.#pollAgain) return;
      }
    } catch (error) {
      this.#emit('error', { error, source: 'dlr' });
    }
  }

  /** How many more reports may be held (running or queued). */
  #room(): number {
    return HELD_PER_SLOT * this.#config.concurrency - this.#active - this.#waiting;
  }

  /** The room at which a finished attempt claims more: a batch, or half of what may be held. */
  #refillAt(): number {
    return Math.min(this.#config.batchSize, (HELD_PER_SLOT * this.#config.concurrency) / 2);
  }

  /** Starts a claimed report or queues it behind its host; `false` when its host's queue is full. */
  #admit(claimed: Claimed): boolean {
    const url = claimed.due.message.callbackUrl;
    const host = url === null ? '' : (callbackTarget(url)?.hostname ?? '');
    let lane = this.#lanes.get(host);
    if (lane === undefined) this.#lanes.set(host, (lane = { active: 0, waiting: [], averageMs: FIRST_GUESS_MS, answers: 0 }));
    if (lane.active < this.#config.perHostConcurrency) {
      this.#run(host, lane, claimed);
    } else if (lane.waiting.length < this.#queueLength(lane)) {
      lane.waiting.push(claimed);
      this.#waiting++;
    } else {
      return false;
    }
    return true;
  }

  /** How many reports `lane` can start inside a lease at its recent pace. */
  #queueLength(lane: HostLane): number {
    const { perHostConcurrency, leaseMs, timeoutMs, concurrency } = this.#config;
    const atPace = perHostConcurrency * Math.max(1, Math.floor((leaseMs - timeoutMs) / Math.max(1, lane.averageMs)));
    // Until its pace is known, a host may not take more than its share: it may be slow.
    const known = lane.answers >= perHostConcurrency;
    return known ? atPace : Math.min(atPace, Math.floor(MAX_HOST_SHARE * HELD_PER_SLOT * concurrency));
  }

  #run(host: string, lane: HostLane, claimed: Claimed): void {
    lane.active++;
    this.#active++;
    const startedAt = performance.now();
    const attempt = this.#attempt(claimed.due).finally(() => {
      lane.averageMs = 0.8 * lane.averageMs + 0.2 * (performance.now() - startedAt);
      lane.answers++;
      this.#inFlight.delete(attempt);
      lane.active--;
      this.#active--;
      this.#next(host, lane);
      // More is due: claim again once a batch's worth of room is free (see wake()).
      if (this.#backlog && this.#room() >= this.#refillAt()) this.wake();
    });
    this.#inFlight.add(attempt);
  }

  /** Gives a freed slot of `host` to its next waiting report that can still finish inside its lease. */
  #next(host: string, lane: HostLane): void {
    while (!this.#closed && lane.waiting.length > 0) {
      const claimed = lane.waiting.shift()!;
      this.#waiting--;
      if (this.#canFinishInLease(claimed, this.#now())) {
        this.#run(host, lane, claimed);
        return;
      }
    }
    if (lane.active === 0 && lane.waiting.length === 0) this.#lanes.delete(host);
  }

  /** Whether an attempt of `claimed` started at `now` would end (within `timeoutMs`) while its lease holds. */
  #canFinishInLease(claimed: Claimed, now: number): boolean {
    return now + this.#config.timeoutMs < claimed.claimedAt + this.#config.leaseMs;
  }

  /** One attempt of one report: post, record, emit. Never rejects. */
  async #attempt(due: DueCallback): Promise<void> {
    const { uid, message } = due;
    const url = message.callbackUrl ?? '';
    const attempt = due.attempts + 1;
    try {
      const { result, hopeless } = await this.#post(due, url);
      const now = this.#now();
      const verdict = verdictOf(result.statusCode);
      const delay =
        verdict === 'retry' && !hopeless
          ? nextAttemptDelay(attempt, this.#config.schedule, result.retryAfterMs, this.#random)
          : null;
      const error = result.error ?? (verdict === 'delivered' ? null : `HTTP ${result.statusCode}`);
      const record: CallbackAttempt =
        verdict === 'delivered'
          ? { result: 'delivered', statusCode: result.statusCode, error: null, nextAttemptAt: null, now }
          : delay === null
            ? { result: 'failed', statusCode: result.statusCode, error, nextAttemptAt: null, now }
            : { result: 'retry', statusCode: result.statusCode, error, nextAttemptAt: now + delay, now };
      await this.#storage.recordCallbackAttempt(uid, record);
      const event = { uid, message, url, attempt, statusCode: result.statusCode, durationMs: result.durationMs };
      if (record.result === 'delivered') this.#emit('dlr.sent', event);
      else if (record.result === 'failed') this.#emit('dlr.failed', { ...event, error });
      else this.#emit('dlr.retrying', { ...event, error, nextAttemptAt: record.nextAttemptAt! });
    } catch (error) {
      // Not recorded: the lease ends and the report is tried again (at-least-once).
      this.#emit('error', { error, source: 'dlr', ref: message.ref });
    }
  }

  /**
   * Signs and posts one report. `hopeless` marks a failure no retry can mend: a URL wrong
   * in itself (scheme, credentials, internal literal IP) or a secret that cannot sign.
   */
  async #post(due: DueCallback, url: string): Promise<{ result: PostResult; hopeless: boolean }> {
    const urlProblem = callbackUrlProblem(url, this.#config.allowance);
    if (urlProblem !== null) return { result: unsent(`blocked: callback URL ${urlProblem}`), hopeless: true };
    const body = JSON.stringify(buildDlrPayload(due.uid, due.message));
    const secret = due.message.callbackSecret ?? this.#config.secret;
    let headers: Record<string, string> | undefined;
    if (secret !== null) {
      const timestamp = Math.floor(this.#now() / 1000);
      let signature: string;
      try {
        signature = signWebhook(secret, due.uid, timestamp, body);
      } catch (error) {
        this.#emit('error', { error, source: 'dlr', ref: due.message.ref });
        return { result: unsent(`cannot sign: ${(error as Error).message}`), hopeless: true };
      }
      headers = { 'webhook-id': due.uid, 'webhook-timestamp': String(timestamp), 'webhook-signature': signature };
    }
    const result = await this.#sender.post({ url, body, headers, timeoutMs: this.#config.timeoutMs, userAgent: this.#config.userAgent });
    return { result, hopeless: false };
  }
}
