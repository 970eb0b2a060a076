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
 *
 * The drain rate behind `Retry-After` is the faster of two measures, each of which falls
 * short of the true rate when it errs: what this instance's worker took from the queue, and
 * what the shared queue lost between two of those counts plus what this instance added
 * meanwhile (what other instances added, which no instance sees, makes that one fall
 * short). With many instances the first sees only this instance's share; the second sees
 * every instance's drain, as long as the others are not filling the queue as fast. Each is
 * divided by the time it was watched, not by a whole window the process may not have lived
 * yet (docs/operations.md, "The backlog's Retry-After").
 */
import type { Principal } from '../auth/principal.js';
import { SmsError } from '../errors.js';
import type { QueueCount, Storage } from '../storage/contract.js';
import type { BacklogOptions } from './options.js';

/** The window the drain rate is measured over, ms. */
const DRAIN_WINDOW_MS = 10_000;

/**
 * Shortest time between two counts for their difference to tell a drain rate, ms: over
 * less, a few messages more or less would swing it.
 */
const MIN_COUNT_SPAN_MS = 1_000;

/** One count read from storage, for the drain between reads. */
interface CountRead {
  at: number;
  queued: number;
  /** {@link Count.admitted} when the read began. */
  admitted: number;
}

/** A count read from storage, and what this instance accepted since. */
interface Count {
  queued: number;
  at: number;
  /** How long the last read took, ms. */
  tookMs: number;
  reading: Promise<void> | null;
  /** Messages this instance admitted under this count, ever (less those not stored after all). */
  admitted: number;
  /** The reads of the last {@link DRAIN_WINDOW_MS}, oldest first. */
  reads: CountRead[];
}

function newCount(): Count {
  return { queued: 0, at: Number.NEGATIVE_INFINITY, tookMs: 0, reading: null, admitted: 0, reads: [] };
}

/**
 * A count is read again no sooner than this many times its last read took: counting a
 * backlog of a million on PostgreSQL reads a million index entries (about 0.3 s), and a
 * count a second would keep a core a quarter busy. So a count costs at most 5% of the time.
 */
const READ_COST_FACTOR = 20;

/** Messages this instance took from the queue in each second of the last window, and when the first of each left. */
class DrainRate {
  readonly #buckets = new Map<number, { first: number; count: number }>();

  note(now: number): void {
    const second = Math.floor(now / 1000);
    const bucket = this.#buckets.get(second);
    if (bucket !== undefined) {
      bucket.count++;
      return;
    }
    // Seconds that left the window go once a second, when the next one opens.
    for (const key of this.#buckets.keys()) if (key <= second - DRAIN_WINDOW_MS / 1000) this.#buckets.delete(key);
    this.#buckets.set(second, { first: now, count: 1 });
  }

  /**
   * Messages a second from the first that left within the window until now (that first one
   * not counted), 0 with fewer than two. From the first, not from the window's start, so
   * that a process up for a second, or a queue idle until a second ago, is not taken for one
   * draining at a tenth of its pace; until now, so that a drain that stopped fades out.
   */
  perSecond(now: number): number {
    const firstSecond = Math.floor(now / 1000) - DRAIN_WINDOW_MS / 1000 + 1;
    let first = Number.POSITIVE_INFINITY;
    let total = 0;
    for (const [key, bucket] of this.#buckets) {
      if (key < firstSecond) continue;
      total += bucket.count;
      first = Math.min(first, bucket.first);
    }
    if (total < 2) return 0;
    return ((total - 1) * 1000) / Math.max(1, now - first);
  }
}

/**
 * Messages a second the shared queue lost between the oldest and the newest read of the
 * window, counting what this instance added meanwhile; 0 without two reads far enough apart.
 */
function sharedDrainPerSecond(count: Count): number {
  const first = count.reads[0];
  const last = count.reads[count.reads.length - 1];
  if (first === undefined || last === undefined || last.at - first.at < MIN_COUNT_SPAN_MS) return 0;
  const drained = first.queued - last.queued + (last.admitted - first.admitted);
  return Math.max(0, (drained * 1000) / (last.at - first.at));
}

/**
 * Seconds until `excess` messages have drained at `rate` a second: 1 s to an hour. When
 * nothing was seen draining: 60 s once a whole window was watched (the carrier is stuck),
 * else the rest of that window, when the first estimate will be ready.
 */
function retryAfterSeconds(excess: number, rate: number, watchedMs: number): number {
  if (rate <= 0) return watchedMs >= DRAIN_WINDOW_MS ? 60 : Math.max(1, Math.ceil((DRAIN_WINDOW_MS - watchedMs) / 1000));
  return Math.min(3600, Math.max(1, Math.ceil(excess / rate)));
}

/** Checks sends against the backlog bounds; told of every message that leaves the queue. */
export class BacklogGate {
  readonly #count: (principalId?: string) => Promise<QueueCount>;
  readonly #config: Required<BacklogOptions>;
  readonly #now: () => number;
  readonly #keys = new Map<string, Count>();
  readonly #all: Count = newCount();
  readonly #drained = new DrainRate();
  readonly #drainedByKey = new Map<string, DrainRate>();
  /** When this gate began to watch the queue. */
  readonly #startedAt: number;

  constructor(count: NonNullable<Storage['countQueued']>, config: Required<BacklogOptions>, now: () => number) {
    this.#count = count;
    this.#config = config;
    this.#now = now;
    this.#startedAt = now();
  }

  /**
   * Counts `count` more messages of `principal` as queued when they fit both bounds; throws
   * (or rejects with) the 429 or 503 `SmsError` (with `retryAfter` seconds) when they do
   * not. Returns a promise only when a count must first be read from storage: a request
   * between two reads is admitted without a promise turn.
   */
  admit(principal: Principal, count: number): Promise<void> | undefined {
    const now = this.#now();
    let key = this.#keys.get(principal.id);
    if (key === undefined) this.#keys.set(principal.id, (key = newCount()));
    if (!this.#stale(key, now) && !this.#stale(this.#all, now)) {
      this.#take(principal, key, count, now);
      return undefined;
    }
    const counted = key;
    return Promise.all([this.#fresh(counted, now, principal.id), this.#fresh(this.#all, now)]).then(() => this.#take(principal, counted, count, now));
  }

  /** Counts the messages as queued, or throws the 429 or 503 when they do not fit. */
  #take(principal: Principal, key: Count, count: number, now: number): void {
    const perKey = principal.maxQueued ?? this.#config.perKey;
    if (key.queued + count > perKey) {
      const rate = Math.max(this.#drainedByKey.get(principal.id)?.perSecond(now) ?? 0, sharedDrainPerSecond(key));
      throw new SmsError(
        'QUEUE_FULL',
        `Too many queued messages for this key: ${key.queued} queued, at most ${perKey}; retry once some are sent`,
        retryAfterSeconds(key.queued + count - perKey, rate, now - this.#startedAt),
      );
    }
    if (this.#all.queued + count > this.#config.total) {
      const rate = Math.max(this.#drained.perSecond(now), sharedDrainPerSecond(this.#all));
      throw new SmsError(
        'BACKLOG_FULL',
        'The gateway has too many queued messages; retry once some are sent',
        retryAfterSeconds(this.#all.queued + count - this.#config.total, rate, now - this.#startedAt),
      );
    }
    key.queued += count;
    key.admitted += count;
    this.#all.queued += count;
    this.#all.admitted += count;
  }

  /** Gives back what {@link admit} counted for messages that were not stored after all. */
  notStored(principal: Principal, count: number): void {
    const key = this.#keys.get(principal.id);
    if (key !== undefined) {
      key.queued = Math.max(0, key.queued - count);
      key.admitted -= count;
    }
    this.#all.queued = Math.max(0, this.#all.queued - count);
    this.#all.admitted -= count;
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

  /** Whether `count` is older than `refreshMs` (see {@link READ_COST_FACTOR}), so must be read again. */
  #stale(count: Count, now: number): boolean {
    return now - count.at >= Math.max(this.#config.refreshMs, READ_COST_FACTOR * count.tookMs);
  }

  /** Reads `count` again from storage when it is stale; one read at a time. */
  async #fresh(count: Count, now: number, principalId?: string): Promise<void> {
    if (!this.#stale(count, now)) return;
    const started = performance.now();
    const admitted = count.admitted;
    count.reading ??= this.#count(principalId)
      .then((read) => {
        count.queued = read.transactional + read.bulk;
        count.at = this.#now();
        count.tookMs = performance.now() - started;
        count.reads.push({ at: count.at, queued: count.queued, admitted });
        while (count.reads[0]!.at < count.at - DRAIN_WINDOW_MS) count.reads.shift();
      })
      .finally(() => {
        count.reading = null;
      });
    await count.reading;
  }
}
