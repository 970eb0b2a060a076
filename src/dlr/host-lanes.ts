/**
 * Per-host lanes of the delivery report dispatcher: at most `perHostConcurrency` attempts
 * run to one host, and a host's queue holds only what it can start inside the lease at its
 * recent pace. A fast receiver's queue is long (one URL for every report is the common
 * case, and it drains in milliseconds), a slow one's short, so a slow host delays its own
 * reports, never other hosts'.
 */
import { callbackTarget } from './callback-target.js';
import { webhookUrl, type Webhook } from './webhook.js';

/**
 * A host's answer time before it has answered, ms. Optimistic: most receivers answer fast,
 * and a slow one is found out within its first answers (its queue then shrinks, and what
 * it cannot start inside the lease is left to the lease).
 */
const FIRST_GUESS_MS = 50;

/** The largest share of the held reports a host whose pace is not known yet may queue. */
const MAX_HOST_SHARE = 0.5;

/** A claimed webhook (a report or an inbound message's) and when it was claimed (its lease runs from then). */
export interface ClaimedReport {
  due: Webhook;
  claimedAt: number;
}

/** The bounds the lanes keep. */
export interface HostLanesConfig {
  perHostConcurrency: number;
  leaseMs: number;
  /** The longest an attempt takes, ms. */
  timeoutMs: number;
  /** The most reports the dispatcher holds: a host of unknown pace queues at most a share of it. */
  capacity: number;
}

/** A report waiting for its host's slot, and how to let go of it. */
interface Waiting {
  claimed: ClaimedReport;
  /** Settles the promise that holds it in the claim loop. */
  release: () => void;
}

/** One destination host's running attempts, the claimed reports waiting for a slot, and its pace. */
interface Lane {
  active: number;
  waiting: Waiting[];
  /** Moving average of its attempts' durations, ms. */
  averageMs: number;
  /** Attempts finished, so far: the average means little before a few. */
  answers: number;
}

/** Runs reports through per-host lanes. */
export class HostLanes {
  readonly #config: HostLanesConfig;
  readonly #attempt: (due: Webhook) => Promise<void>;
  readonly #now: () => number;
  readonly #lanes = new Map<string, Lane>();
  #closed = false;

  constructor(config: HostLanesConfig, attempt: (due: Webhook) => Promise<void>, now: () => number) {
    this.#config = config;
    this.#attempt = attempt;
    this.#now = now;
  }

  /**
   * Starts a claimed report, or queues it behind its host. The promise settles when its
   * attempt has ended or it was let go of (its lease ran out in the queue, or the lanes
   * closed); `undefined` when its host's queue is full.
   */
  admit(claimed: ClaimedReport): Promise<void> | undefined {
    const url = webhookUrl(claimed.due);
    const host = url === null ? '' : (callbackTarget(url)?.hostname ?? '');
    let lane = this.#lanes.get(host);
    if (lane === undefined) this.#lanes.set(host, (lane = { active: 0, waiting: [], averageMs: FIRST_GUESS_MS, answers: 0 }));
    if (lane.active < this.#config.perHostConcurrency) return this.#run(host, lane, claimed);
    if (lane.waiting.length >= this.#queueLength(lane)) return undefined;
    const queue = lane.waiting;
    return new Promise<void>((release) => queue.push({ claimed, release }));
  }

  /**
   * Starts no more queued reports and lets go of every one queued; returns those that could
   * still be sent inside their lease (the others may be another instance's by now).
   */
  close(): ClaimedReport[] {
    this.#closed = true;
    const now = this.#now();
    const left: ClaimedReport[] = [];
    for (const lane of this.#lanes.values()) {
      for (const { claimed, release } of lane.waiting.splice(0)) {
        if (this.canFinishInLease(claimed, now)) left.push(claimed);
        release();
      }
    }
    return left;
  }

  /** Whether an attempt of `claimed` started at `now` would end (within `timeoutMs`) while its lease holds. */
  canFinishInLease(claimed: ClaimedReport, now: number): boolean {
    return now + this.#config.timeoutMs < claimed.claimedAt + this.#config.leaseMs;
  }

  /** How many reports `lane` can start inside a lease at its recent pace. */
  #queueLength(lane: Lane): number {
    const { perHostConcurrency, leaseMs, timeoutMs, capacity } = this.#config;
    const atPace = perHostConcurrency * Math.max(1, Math.floor((leaseMs - timeoutMs) / Math.max(1, lane.averageMs)));
    // Until its pace is known, a host may not take more than its share: it may be slow.
    const known = lane.answers >= perHostConcurrency;
    return known ? atPace : Math.min(atPace, Math.floor(MAX_HOST_SHARE * capacity));
  }

  #run(host: string, lane: Lane, claimed: ClaimedReport): Promise<void> {
    lane.active++;
    const startedAt = performance.now();
    return this.#attempt(claimed.due).finally(() => {
      lane.averageMs = 0.8 * lane.averageMs + 0.2 * (performance.now() - startedAt);
      lane.answers++;
      lane.active--;
      this.#next(host, lane);
    });
  }

  /** Gives a freed slot of `host` to its next waiting report that can still finish inside its lease. */
  #next(host: string, lane: Lane): void {
    while (!this.#closed && lane.waiting.length > 0) {
      const { claimed, release } = lane.waiting.shift()!;
      if (this.canFinishInLease(claimed, this.#now())) {
        void this.#run(host, lane, claimed).finally(release);
        return;
      }
      // Left to its lease: a claim takes it again.
      release();
    }
    if (lane.active === 0 && lane.waiting.length === 0) this.#lanes.delete(host);
  }
}
