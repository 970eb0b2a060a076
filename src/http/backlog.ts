/**
 * The backlog bounds: a send whose messages would take a key's queued messages past its
 * bound is refused whole with 429 (`QUEUE_FULL`), and one that would take everyone's past
 * the global bound with 503 (`BACKLOG_FULL`), before anything is stored or charged. Each
 * answer carries a `Retry-After` estimated from how fast the queue drained lately.
 *
 * The counts come from `Storage.countQueued`, at most once per `refreshMs` per key (and for
 * all; less often when counting is slow), plus what this instance accepted since: a count
 * per request would cost a storage round trip each. So a bound holds to within what all
 * instances accept between two counts.
 */
import type { Principal } from '../auth/principal.js';
import { SmsError } from '../errors.js';
import type { QueueCount, Storage } from '../storage/contract.js';

/** The `backlog` option: bounds on queued messages (accepted, not yet submitted). */
export interface BacklogOptions {
  /** Most queued messages per key; more answers 429. A principal's `maxQueued` overrides it. Default 100,000. */
  perKey?: number;
  /** Most queued messages in all; more answers 503. Default 1,000,000. */
  total?: number;
  /** How old a count may be before it is read again from storage, ms. Default 1,000. */
  refreshMs?: number;
}

/** The backlog defaults. */
export const BACKLOG_DEFAULTS: Readonly<Required<BacklogOptions>> = {
  perKey: 100_000,
  total: 1_000_000,
  refreshMs: 1_000,
};

/** The window the drain rate is measured over, s. */
const DRAIN_WINDOW_S = 10;

/** A count read from storage, and what this instance accepted since. */
interface Count {
  queued: number;
  at: number;
  /** How long the last read took, ms. */
  tookMs: number;
  reading: Promise<void> | null;
}

/**
 * A count is read again no sooner than this many times its last read took: counting a
 * backlog of a million on PostgreSQL reads a million index entries (about 0.3 s), and a
 * count a second would keep a core a quarter busy. So a count costs at most 5% of the time.
 */
const READ_COST_FACTOR = 20;

/** Messages that left the queue in each of the last seconds, to estimate the drain rate. */
class DrainRate {
  readonly #buckets = new Map<number, number>();

  note(now: number, count = 1): void {
    const second = Math.floor(now / 1000);
    this.#buckets.set(second, (this.#buckets.get(second) ?? 0) + count);
    for (const key of this.#buckets.keys()) if (key <= second - DRAIN_WINDOW_S) this.#buckets.delete(key);
  }

  /** Messages a second over the window, 0 when none left. */
  perSecond(now: number): number {
    const second = Math.floor(now / 1000);
    let total = 0;
    for (const [key, count] of this.#buckets) if (key > second - DRAIN_WINDOW_S) total += count;
    return total / DRAIN_WINDOW_S;
  }
}

/** Seconds until `excess` messages have drained at `rate` a second: 1 s to an hour; 60 s when nothing drains. */
function retryAfterSeconds(excess: number, rate: number): number {
  if (rate <= 0) return 60;
  return Math.min(3600, Math.max(1, Math.ceil(excess / rate)));
}

/** Checks sends against the backlog bounds; told of every message that leaves the queue. */
export class BacklogGate {
  readonly #count: (principalId?: string) => Promise<QueueCount>;
  readonly #config: Required<BacklogOptions>;
  readonly #now: () => number;
  readonly #keys = new Map<string, Count>();
  readonly #all: Count = { queued: 0, at: Number.NEGATIVE_INFINITY, tookMs: 0, reading: null };
  readonly #drained = new DrainRate();
  readonly #drainedByKey = new Map<string, DrainRate>();

  constructor(count: NonNullable<Storage['countQueued']>, config: Required<BacklogOptions>, now: () => number) {
    this.#count = count;
    this.#config = config;
    this.#now = now;
  }

  /**
   * Resolves when `count` more messages of `principal` fit both bounds, and counts them as
   * queued; throws the 429 or 503 `SmsError` (with `retryAfter` seconds) when they do not.
   */
  async admit(principal: Principal, count: number): Promise<void> {
    const now = this.#now();
    let key = this.#keys.get(principal.id);
    if (key === undefined) this.#keys.set(principal.id, (key = { queued: 0, at: Number.NEGATIVE_INFINITY, tookMs: 0, reading: null }));
    await Promise.all([this.#fresh(key, now, principal.id), this.#fresh(this.#all, now)]);
    const perKey = principal.maxQueued ?? this.#config.perKey;
    if (key.queued + count > perKey) {
      const rate = this.#drainedByKey.get(principal.id)?.perSecond(now) ?? 0;
      throw new SmsError(
        'QUEUE_FULL',
        `Too many queued messages for this key: ${key.queued} queued, at most ${perKey}; retry once some are sent`,
        retryAfterSeconds(key.queued + count - perKey, rate),
      );
    }
    if (this.#all.queued + count > this.#config.total) {
      throw new SmsError(
        'BACKLOG_FULL',
        'The gateway has too many queued messages; retry once some are sent',
        retryAfterSeconds(this.#all.queued + count - this.#config.total, this.#drained.perSecond(now)),
      );
    }
    key.queued += count;
    this.#all.queued += count;
  }

  /** Gives back what {@link admit} counted for messages that were not stored after all. */
  notStored(principal: Principal, count: number): void {
    const key = this.#keys.get(principal.id);
    if (key !== undefined) key.queued = Math.max(0, key.queued - count);
    this.#all.queued = Math.max(0, this.#all.queued - count);
  }

  /** A message of `principalId` left the queue (submitted, or ended before it). */
  left(principalId: string): void {
    const now = this.#now();
    this.#drained.note(now);
    let rate = this.#drainedByKey.get(principalId);
    if (rate === undefined) this.#drainedByKey.set(principalId, (rate = new DrainRate()));
    rate.note(now);
    const key = this.#keys.get(principalId);
    if (key !== undefined) key.queued = Math.max(0, key.queued - 1);
    this.#all.queued = Math.max(0, this.#all.queued - 1);
  }

  /** Reads `count` again from storage when it is older than `refreshMs` (see {@link READ_COST_FACTOR}); one read at a time. */
  async #fresh(count: Count, now: number, principalId?: string): Promise<void> {
    if (now - count.at < Math.max(this.#config.refreshMs, READ_COST_FACTOR * count.tookMs)) return;
    const started = performance.now();
    count.reading ??= this.#count(principalId)
      .then((read) => {
        count.queued = read.transactional + read.bulk;
        count.at = this.#now();
        count.tookMs = performance.now() - started;
      })
      .finally(() => {
        count.reading = null;
      });
    await count.reading;
  }
}
