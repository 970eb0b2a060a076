/**
 * Applies carrier receipts to stored messages, and answers the carrier only once a receipt
 * is stored: a receipt acknowledged but kept only in memory is lost when the process dies,
 * and its message then ends `expired` although it was delivered.
 *
 * A receipt whose carrier id is not known yet (it overtook the recording of its own
 * submission) is held, and tried again, for a few seconds; still unmatched, it is refused
 * with {@link ReceiptNotYetMatched} so the carrier sends it again, and it is dropped (and
 * acknowledged) only once it has been unmatched for `waitMs` since it was first seen.
 *
 * So is a receipt that looks like a duplicate: an SMSC that restarts may hand out an id
 * again, and a receipt for the new message that overtakes its recording matches the old,
 * finished one.
 *
 * Both first wait for this instance's worker to record every part it has sent so far
 * (`submissionsRecorded`) and try once more: that settles the common case at once, without
 * a timed wait. A duplicate still matching only a finished part then is a true duplicate
 * and is acknowledged. An unknown id may be another instance's submission being recorded
 * (PostgreSQL), so it is held and retried as above.
 */
import { ReceiptNotYetMatched, type CarrierReceipt } from '../delivery/contract.js';
import { carrierIdSpellings, normalizeCarrierId } from '../delivery/carrier-ids.js';
import type { Emit } from '../observe/events.js';
import { SPAN_NAMES, type MessageTracing, type SpanFields } from '../observe/tracing.js';
import type { StoredWebhook, WebhookHandOff } from '../outbox/hand-off.js';
import type { LeasedReport, MessageRecord, ReceiptResult, Storage, Transition } from '../storage/contract.js';
import { EventError } from '../errors.js';

/** What the receipt handler needs. */
export interface ReceiptHandlerDeps {
  storage: Storage;
  emit: Emit;
  now: () => number;
  /**
   * How long a receipt whose carrier id is unknown keeps being refused for the carrier to
   * re-send, from when it was first seen, ms; after that it is dropped with an `error`.
   */
  waitMs: number;
  /** Called when a receipt ends a message. */
  onTransition: (transition: Transition) => void;
  /**
   * This instance's report sender, to which a report a receipt creates is handed straight,
   * stored under its lease (`PartReceipt.reportLease`); without it, reports are claimed.
   */
  reports?: WebhookHandOff;
  /**
   * Resolves once every part this instance has sent to the carrier is recorded
   * (`SubmitWorker.submissionsRecorded`). Without it, a duplicate is rechecked for a few
   * seconds instead.
   */
  submissionsRecorded?: () => Promise<void>;
  /**
   * OpenTelemetry: a span per receipt stored, in its message's trace (from when the receipt
   * arrived); absent or `null`: none.
   */
  tracing?: MessageTracing | null;
}

/**
 * Longest time one delivery of an unmatched receipt is held before it is refused, ms. A
 * receipt that overtook the recording of its submission normally finds it within tens of
 * milliseconds, after a slow commit within a second or two. Meanwhile the carrier waits
 * for the answer with the receipt in its window of unanswered ones (often only a few wide,
 * with a response timeout of tens of seconds), so holding longer would stall the receipts
 * behind it for one the carrier re-sends anyway.
 */
const HOLD_MS = 5_000;

/** How long a receipt that matched an already finished part is tried again, ms. */
const DUPLICATE_RECHECK_MS = 5_000;

/** First retry of a held receipt, ms; doubles up to {@link MAX_RETRY_MS}. */
const FIRST_RETRY_MS = 50;
const MAX_RETRY_MS = 5_000;

/**
 * Most carrier ids of refused receipts remembered (with when each was first seen); past it
 * the oldest are forgotten, so a flood of ids that never match cannot grow memory without
 * end. A forgotten id's next re-send is refused anew rather than dropped.
 */
const REMEMBERED_IDS = 10_000;

/**
 * A refused receipt not re-sent for this long is forgotten, ms: the carrier has given up
 * on it (re-sends come within minutes), and a receipt naming that id later is a new one,
 * for an id an SMSC reissued after a restart, so it gets its own `waitMs`.
 */
const FORGET_AFTER_MS = 10 * 60_000;

/** When a refused receipt's carrier id was first seen and last re-sent. */
interface Seen {
  firstSeen: number;
  lastSeen: number;
}

/**
 * Carrier ids of receipts refused as not yet matched, kept in order of their last re-send
 * (a Map keeps insertion order, and each re-send re-inserts its id), so the stale ones are
 * at the front.
 */
class RefusedIds {
  readonly #seen = new Map<string, Seen>();

  /** When `id` was first seen, if it was refused before and not forgotten since. */
  firstSeen(id: string, now: number): number | undefined {
    this.#forgetStale(now);
    return this.#seen.get(id)?.firstSeen;
  }

  /** Notes that a receipt for `id`, first seen at `firstSeen`, was refused at `now`. */
  refused(id: string, firstSeen: number, now: number): void {
    this.#seen.delete(id);
    this.#seen.set(id, { firstSeen, lastSeen: now });
    while (this.#seen.size > REMEMBERED_IDS) this.#seen.delete(this.#seen.keys().next().value!);
  }

  /** Forgets `id`: its receipt was stored, found a duplicate, or dropped. */
  forget(id: string): void {
    this.#seen.delete(id);
  }

  #forgetStale(now: number): void {
    for (const [id, seen] of this.#seen) {
      if (now - seen.lastSeen < FORGET_AFTER_MS) return;
      this.#seen.delete(id);
    }
  }
}

/** Receives receipts from the delivery adapter and records them. */
export class ReceiptHandler {
  readonly #deps: ReceiptHandlerDeps;
  readonly #refused = new RefusedIds();
  /** Wakes each held receipt waiting for its next try; close() calls them all. */
  readonly #sleeping = new Set<() => void>();
  /** Every `receive` not settled yet, which close() waits for. */
  readonly #receiving = new Set<Promise<void>>();
  #closed = false;

  constructor(deps: ReceiptHandlerDeps) {
    this.#deps = deps;
  }

  /**
   * Records one receipt. Resolves once it is stored (it matched its part), once it is found
   * to repeat a receipt stored before (after a recheck of up to 5 s, see the module notes),
   * or when it is dropped with an `error` event (unmatched for `waitMs` since first seen).
   * Rejects with {@link ReceiptNotYetMatched} when its carrier id is still unknown after
   * holding it for up to 5 s, or when the handler is closed, so the adapter refuses it and
   * the carrier sends it again; with a storage error when storage fails.
   */
  receive(receipt: CarrierReceipt): Promise<void> {
    const receiving = this.#receive(receipt);
    this.#receiving.add(receiving);
    const done = () => void this.#receiving.delete(receiving);
    receiving.then(done, done);
    return receiving;
  }

  /**
   * Tries each held receipt once more, settles it and stops. The router closes this after
   * the worker has recorded every submission it made, so a receipt that was waiting for its
   * own recording finds it now; one still unmatched is refused with
   * {@link ReceiptNotYetMatched}, so the carrier sends it again to the next instance (or
   * this one after its restart) instead of it being dropped. Receipts that arrive after
   * this are tried once and answered the same way.
   */
  async close(): Promise<void> {
    this.#closed = true;
    for (const wake of [...this.#sleeping]) wake();
    while (this.#receiving.size > 0) await Promise.allSettled([...this.#receiving]);
  }

  async #receive(receipt: CarrierReceipt): Promise<void> {
    const { emit, now, waitMs } = this.#deps;
    const arrived = now();
    // The span's start, on the wall clock the tracer reads for a span's start and end (`now`
    // may be a test's): its message, and so its trace, is known only once the receipt is stored.
    const arrivedAt = this.#deps.tracing == null ? 0 : Date.now();
    const id = normalizeCarrierId(receipt.carrierId);
    const firstSeen = this.#refused.firstSeen(id, arrived) ?? arrived;
    const giveUpAt = firstSeen + waitMs;
    const holdUntil = Math.min(arrived + Math.min(HOLD_MS, waitMs), giveUpAt);
    const recheckDuplicateUntil = arrived + Math.min(DUPLICATE_RECHECK_MS, waitMs);
    const submissionsRecorded = this.#deps.submissionsRecorded;
    let waitedForRecordings = false;
    for (let retryMs = FIRST_RETRY_MS; ; retryMs = Math.min(retryMs * 2, MAX_RETRY_MS)) {
      const closedBefore = this.#closed;
      const kind = await this.#apply(receipt, arrivedAt);
      const at = now();
      // A try that began before close() may have missed the worker's last recordings.
      if (this.#closed && !closedBefore && (kind === 'unknown' || kind === 'duplicate')) continue;
      if (!waitedForRecordings && submissionsRecorded !== undefined && (kind === 'unknown' || kind === 'duplicate')) {
        waitedForRecordings = true;
        // Bounded by the hold: a recording that hangs (storage stalled) must not hold the
        // carrier's answer longer than an unmatched receipt is held anyway.
        const bound = kind === 'unknown' ? holdUntil : recheckDuplicateUntil;
        await Promise.race([submissionsRecorded(), this.#pause(Math.max(0, bound - at))]);
        continue;
      }
      let until: number;
      if (kind === 'unknown') {
        if (at >= giveUpAt) {
          this.#refused.forget(id);
          emit('error', {
            error: new EventError('RECEIPT_DROPPED', `Receipt for unknown carrier id "${receipt.carrierId}" dropped: unmatched for ${waitMs} ms since it was first seen`),
            source: 'receipt',
          });
          return;
        }
        if (this.#closed || at >= holdUntil) {
          this.#refused.refused(id, firstSeen, at);
          throw new ReceiptNotYetMatched(receipt.carrierId);
        }
        until = holdUntil;
      } else if (kind === 'duplicate' && !waitedForRecordings && !this.#closed && at < recheckDuplicateUntil) {
        until = recheckDuplicateUntil;
      } else {
        this.#refused.forget(id);
        return;
      }
      await this.#pause(Math.min(retryMs, until - at));
    }
  }

  async #apply(receipt: CarrierReceipt, arrivedAt: number): Promise<ReceiptResult['kind']> {
    const reports = this.#deps.reports;
    const lease = reports?.lease(1) ?? null;
    let result: ReceiptResult;
    try {
      result = await this.#deps.storage.applyReceipt({
        carrierIds: carrierIdSpellings(receipt.carrierId),
        outcome: receipt.outcome,
        now: this.#deps.now(),
        ...(lease === null ? {} : { reportLease: lease }),
      });
    } catch (error) {
      reports?.notStored(1, lease);
      throw error;
    }
    const tracing = this.#deps.tracing;
    if (tracing != null) traceReceipt(tracing, receipt, result, arrivedAt);
    if (result.kind === 'part' && result.leasedReport !== undefined && result.message !== undefined) {
      // A part's own report (one report per part), born under the lease.
      reports?.stored([storedReport(result.leasedReport, result.message)], lease);
      return result.kind;
    }
    if (result.kind !== 'terminal') {
      reports?.notStored(1, lease);
      return result.kind;
    }
    const { transition } = result;
    this.#deps.onTransition(transition);
    // A report stored under the lease is the sender's at once; without one it is claimed.
    if (transition.leasedReport === undefined) reports?.notStored(1, lease);
    else reports?.stored([storedReport(transition.leasedReport, transition.message)], lease);
    return result.kind;
  }

  /** Waits `ms`, or less if close() is called meanwhile. */
  #pause(ms: number): Promise<void> {
    if (this.#closed) return Promise.resolve();
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.#sleeping.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      timer.unref();
      this.#sleeping.add(wake);
    });
  }
}

/** The report `leased` on `message`, as the report sender is handed it. */
function storedReport(leased: LeasedReport, message: MessageRecord): StoredWebhook {
  return leased.part === undefined ? { uid: leased.uid, message } : { uid: leased.uid, message, part: leased.part };
}

/**
 * Records the span of a receipt stored as `result`, from `arrivedAt` (epoch ms) to now: one
 * that ended its message (which storage gives, its trace with it), or that ended one part only
 * (`part`, or `late` after the message ended otherwise), whose message's trace this instance
 * noted when it submitted the part (part-traces.ts). Unmatched receipts and duplicates have none.
 */
function traceReceipt(tracing: MessageTracing, receipt: CarrierReceipt, result: ReceiptResult, arrivedAt: number): void {
  if (result.kind === 'unknown' || result.kind === 'duplicate') return;
  // An untraced message (no tracer provider when it was sent) was never noted in the parts.
  const traceparent = result.kind === 'terminal' ? result.transition.message.traceparent : tracing.parts.of(result.ref);
  if (traceparent == null) return;
  const fields: SpanFields = { 'sms.message_ref': result.ref, 'sms.carrier_id': receipt.carrierId, 'sms.receipt.result': result.kind, 'sms.receipt.state': receipt.outcome.state };
  if (result.kind === 'terminal') {
    tracing.parts.forget(result.ref);
    fields['sms.state'] = result.transition.message.state;
  }
  tracing.child(SPAN_NAMES.receipt, traceparent, fields, 'CONSUMER', arrivedAt)?.end();
}
