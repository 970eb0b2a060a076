/**
 * The delivery report dispatcher: the claim loop's use for webhooks. It claims due reports
 * (and the due webhooks of inbound messages, when the storage keeps them) from storage, runs
 * each through its host's lane ({@link HostLanes}) to an attempt (`reportAttempt`: sign,
 * POST, record, `dlr.*` or `inbound.*` event). Both kinds share the lanes, the bounds and
 * the connections; where this says "report", an inbound webhook is handled alike.
 *
 * Reports live in storage, not here: a report claimed but not finished when the process
 * stops is claimed again when its lease ends, so a restart resumes every pending report
 * (a graceful `close()` hands back those not started, so they need not wait for that).
 *
 * Fairness: at most `concurrency` attempts run at once, and at most `perHostConcurrency`
 * to one host. A claimed report beyond what its host's queue can start inside the lease is
 * handed back for {@link DEFER_MS} (`Storage.deferCallbacks`), so the next claims reach
 * other hosts' reports and it is claimed again a second later. At most
 * {@link HELD_PER_SLOT} x `concurrency` reports are held at once (plus those handed over by
 * receipts stored while the last room was being taken).
 *
 * The hand-off (outbox/hand-off.ts): a receipt that ends a message, applied while there is
 * room, stores its report leased to this instance ({@link CallbackDispatcher.lease}), and
 * the receipt handler hands it straight over ({@link CallbackDispatcher.stored}): no claim
 * reads it back from storage. An inbound message's webhook comes the same way from the
 * inbound handler. Without room, a webhook is stored unleased and claimed like any other.
 */
import type { Emit } from '../observe/events.js';
import type { MessageTracing } from '../observe/tracing.js';
import { ClaimLoop } from '../outbox/claim-loop.js';
import type { StoredWebhook, WebhookHandOff } from '../outbox/hand-off.js';
import type { InsertLease, Storage } from '../storage/contract.js';
import { reportAttempt } from './attempt.js';
import { HostLanes, type ClaimedReport } from './host-lanes.js';
import type { DlrConfig } from './options.js';
import type { ReportFormatOf } from './payload.js';
import { CallbackSender } from './post.js';
import { isInbound, type Webhook } from './webhook.js';
import { EndpointHealth } from './endpoint-health.js';

/** Claims per poll at most, so a backlog of one slow host cannot keep a poll busy for long. */
const MAX_CLAIMS_PER_POLL = 16;

/**
 * How long a claimed report whose host's queue is full is handed back for, ms: other
 * hosts' reports are claimed meanwhile, and it is claimed again soon, not after a lease.
 */
const DEFER_MS = 1_000;

/** The report format when the router says none. */
const envelopeForAll: ReportFormatOf = () => 'envelope';

/** Reports held (running or queued) per unit of `concurrency`: bounds memory. */
const HELD_PER_SLOT = 16;

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
  /** The format of a principal's delivery reports; default: the envelope for everyone. */
  reportFormat?: ReportFormatOf;
  /** OpenTelemetry: a span per webhook attempt (report or inbound), in its message's trace; default none. */
  tracing?: MessageTracing | null;
  /** The failover URL of a principal's reports (`Principal.callbackFailoverUrl`), or `null`; default: none has one. */
  failoverOf?: (principalId: string) => string | null;
}

/**
 * Sends delivery reports from storage until closed. Create one per router; call
 * {@link CallbackDispatcher.start} once, {@link CallbackDispatcher.stored} when webhooks
 * were stored, and {@link CallbackDispatcher.close} to stop.
 */
export class CallbackDispatcher implements WebhookHandOff {
  readonly #storage: Storage;
  readonly #emit: Emit;
  readonly #config: DlrConfig;
  readonly #now: () => number;
  readonly #owner: string;
  readonly #sender: CallbackSender;
  readonly #lanes: HostLanes;
  readonly #health: EndpointHealth;
  readonly #loop: ClaimLoop<Webhook>;
  /** Reports to hand back at the end of this turn (see #handBack). */
  readonly #handingBack: Webhook[] = [];
  /** Reports that came in during close, to hand back before it ends (see close()). */
  #leftAtClose: Webhook[] | null = null;
  /** When inbound webhooks are next claimed (see #claim); 0: at the next claim. */
  #inboundClaimAt = 0;
  #closed = false;
  #closing: Promise<void> | null = null;

  constructor(options: CallbackDispatcherOptions) {
    const { storage, config, owner } = options;
    this.#storage = storage;
    this.#emit = options.emit;
    this.#config = config;
    this.#owner = owner;
    this.#now = options.now ?? Date.now;
    this.#sender = new CallbackSender({
      allow: config.allowance,
      resolve: config.resolve,
      connectionsPerHost: config.perHostConcurrency,
    });
    this.#health = new EndpointHealth(config.pauseAfterMs, this.#emit);
    const capacity = HELD_PER_SLOT * config.concurrency;
    const attempt = reportAttempt({
      storage, emit: this.#emit, config, sender: this.#sender, now: this.#now, random: options.random ?? Math.random,
      reportFormat: options.reportFormat ?? envelopeForAll, tracing: options.tracing ?? null,
      ...(options.failoverOf === undefined ? {} : { failoverOf: options.failoverOf }),
      health: this.#health,
    });
    this.#lanes = new HostLanes({ ...config, capacity }, attempt, this.#now);
    this.#loop = new ClaimLoop<Webhook>({
      capacity,
      pollIntervalMs: config.pollIntervalMs,
      batchSize: config.batchSize,
      maxClaimsPerPoll: MAX_CLAIMS_PER_POLL,
      // A claim walks the reports held: claiming one at a time cost a walk per report.
      refillAt: Math.min(config.batchSize, capacity / 2),
      claim: (limit, now) => this.#claim(limit, now),
      run: (due, claimedAt) => this.#admit({ due, claimedAt }),
      onRefused: (refused, claimedAt) => this.#defer(refused, claimedAt + DEFER_MS),
      onError: (error) => this.#emit('error', { error, source: 'dlr' }),
      now: this.#now,
    });
  }

  /** Starts polling storage every `pollIntervalMs` (the timer does not keep the process alive). */
  start(): void {
    if (!this.#closed) this.#loop.start();
  }

  /** Polls soon: a report has just become due. Harmless when nothing is. */
  wake(): void {
    this.#loop.wake();
  }

  /** Polls soon, claiming inbound webhooks too: some have just become due (a replay). */
  wakeInbound(): void {
    this.#inboundClaimAt = 0;
    this.#loop.wake();
  }

  /** Which callback URLs are paused, and resuming them (endpoint-health.ts). */
  get endpoints(): EndpointHealth {
    return this.#health;
  }

  /**
   * The hand-off's lease ({@link WebhookHandOff}): one under which webhooks stored now are
   * handed straight to this dispatcher (`PartReceipt.reportLease`, `InboundInsertOptions.lease`),
   * or `null` when it is not running or holds all it may: they are then stored unleased and
   * claimed as usual. It takes no room: a webhook stored under it is held even if the room
   * filled meanwhile (so the webhooks held may pass their bound by those stored at once,
   * which a lease was given to), since handing it back would cost a storage write now and a
   * claim later.
   */
  lease(): InsertLease | null {
    if (!this.#loop.running || this.#loop.room() <= 0) return null;
    return { owner: this.#owner, until: this.#now() + this.#config.leaseMs };
  }

  /**
   * Webhooks were stored: those under a {@link lease} are sent as if claimed when their lease
   * began, no claim reading them back (only what a host's queue cannot take is handed back,
   * as a claim does); unleased ones are claimed soon.
   */
  stored(webhooks: readonly StoredWebhook[], lease: InsertLease | null): void {
    if (lease === null) {
      if (webhooks.some((webhook) => 'inbound' in webhook)) this.#inboundClaimAt = 0;
      this.#loop.wake();
      return;
    }
    for (const webhook of webhooks) {
      const due: Webhook =
        'inbound' in webhook
          ? { kind: 'inbound', uid: webhook.inbound.uid!, attempts: 0, inbound: webhook.inbound }
          : { uid: webhook.uid, attempts: 0, message: webhook.message, ...(webhook.part === undefined ? {} : { part: webhook.part }) };
      this.#handOverWebhook(due, lease.until);
    }
  }

  /** Nothing to give back: a {@link lease} takes no room. */
  notStored(): void {}

  #handOverWebhook(due: Webhook, until: number): void {
    const work = this.#admit({ due, claimedAt: until - this.#config.leaseMs });
    if (work === undefined) this.#handBack(due);
    else this.#loop.hold(work);
  }

  /**
   * Claims due reports, and first the due inbound webhooks when the storage keeps them: few,
   * and most are handed over at once, so they are claimed at most once a poll interval (or
   * when woken for one, or while their claims come back full) rather than with every claim.
   */
  async #claim(limit: number, now: number): Promise<Webhook[]> {
    const storage = this.#storage;
    const claimed: Webhook[] = [];
    if (storage.claimInbound !== undefined && now >= this.#inboundClaimAt) {
      const options = { owner: this.#owner, limit, leaseMs: this.#config.leaseMs, now };
      for (const due of await storage.claimInbound(options)) claimed.push({ ...due, kind: 'inbound' });
      this.#inboundClaimAt = claimed.length >= limit ? 0 : now + this.#config.pollIntervalMs;
    }
    if (claimed.length >= limit) return claimed;
    const reports = await storage.claimCallbacks({ owner: this.#owner, limit: limit - claimed.length, leaseMs: this.#config.leaseMs, now });
    return claimed.length === 0 ? reports : [...claimed, ...reports];
  }

  /** Hands webhooks back, claimable again at `until`: reports and inbound ones each to their own table. */
  async #defer(webhooks: readonly Webhook[], until: number): Promise<void> {
    const reports: string[] = [];
    const inbound: string[] = [];
    for (const webhook of webhooks) (isInbound(webhook) ? inbound : reports).push(webhook.uid);
    if (reports.length > 0 || inbound.length === 0) await this.#storage.deferCallbacks(reports, until);
    if (inbound.length > 0) await this.#storage.deferInbound?.(inbound, until);
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

  /** Runs a report through its host's lane; during and after close it is only noted to hand back. */
  #admit(claimed: ClaimedReport): Promise<void> | undefined {
    if (this.#closed) {
      // During close: handed back with the rest. After it: left to its lease (the storage
      // may be closed by then).
      this.#leftAtClose?.push(claimed.due);
      return Promise.resolve();
    }
    return this.#lanes.admit(claimed);
  }

  /**
   * Hands a held report back without an attempt, claimable again in {@link DEFER_MS}. The
   * hand-backs of one turn of the event loop are one storage call: when receipts outrun a
   * receiver, many reports of a burst come back this way.
   */
  #handBack(due: Webhook): void {
    this.#handingBack.push(due);
    if (this.#handingBack.length > 1) return;
    setImmediate(() => {
      const webhooks = this.#handingBack.splice(0);
      this.#defer(webhooks, this.#now() + DEFER_MS).catch((error: unknown) => this.#emit('error', { error, source: 'dlr' }));
    });
  }

  async #shutDown(): Promise<void> {
    this.#closed = true;
    this.#leftAtClose = [];
    await this.#loop.stop();
    for (const claimed of this.#lanes.close()) this.#leftAtClose.push(claimed.due);
    // Handed back now, so other instances take them while the attempts in flight end;
    // what receipts hand over meanwhile goes back after those.
    await this.#handBackLeftAtClose();
    await this.#loop.drain();
    await this.#handBackLeftAtClose();
    this.#leftAtClose = null;
    await this.#sender.close();
  }

  /** Hands back, claimable at once, the reports {@link close} has collected so far. */
  async #handBackLeftAtClose(): Promise<void> {
    const webhooks = this.#leftAtClose?.splice(0) ?? [];
    if (webhooks.length === 0) return;
    await this.#defer(webhooks, this.#now()).catch((error: unknown) => this.#emit('error', { error, source: 'dlr' }));
  }
}
