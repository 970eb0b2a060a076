/**
 * The memory record store, `MemoryRecordStore`: the {@link RecordStore} primitives over plain
 * Maps and sorted lists (sorted-slots.ts) in this process. The class keeps the rows and the
 * guards of an insert, and keeps its indexes up as rows change: the submit queue a claim
 * takes from (submit-queue.ts), the pending reports (report-queue.ts), the sweeps' timers
 * (timers.ts), the counts of queued rows (queue-members.ts), the message list
 * (list-index.ts), the report log (report-log.ts), and the lookups by carrier id and
 * external id (lookups.ts).
 *
 * @module
 */
import type { ClaimOptions } from '../claim-options.js';
import type { QueueCount } from '../contract.js';
import type { IdempotencyRecord } from '../idempotency-record.js';
import type { IdempotencyCursor } from '../erase-storage.js';
import { IdempotencyRecords } from './idempotency.js';
import { MemoryInbound } from './inbound.js';
import type { InsertCounted, InsertGuard, InsertRefusal, MessageRow, MessageWrite, RecordStore, ReportedRow, Timer } from '../record-store.js';
import { UnitCounters } from './unit-counters.js';
import { ListIndex } from './list-index.js';
import { ReportLog } from './report-log.js';
import { CarrierIdIndex, ExternalIdIndex } from './lookups.js';
import type { MessageListQuery } from '../message-list.js';
import type { CallbackListQuery } from '../callback-list.js';
import { QueueMembers } from './queue-members.js';
import { ReportQueue } from './report-queue.js';
import { Slot } from './slot.js';
import type { SlotIndex } from './sorted-slots.js';
import { SubmitQueue } from './submit-queue.js';
import { Timers } from './timers.js';

/**
 * A {@link RecordStore} in this process's memory: fast, and gone with the process. Every
 * method is one synchronous step behind its promise, so each is atomic. A claim of `k` rows
 * costs O(k log n) whatever the backlog (n rows) and however many principals share it;
 * `countQueued` and `queueEnds` cost O(1) amortized; lookups by ref, carrier id and external
 * id are Map reads; a page of the message list walks a sorted index (list-index.ts) from its start. It also keeps inbound (MO) messages and opt-outs (`inbound`, inbound.ts),
 * as `MemoryStorage` does.
 *
 * Copies: the store keeps each row's fields in a slot of its own (slot.ts), one object per
 * message, and hands out a new row object on every read, which the caller owns. The record
 * and the book in a row are shared, not copied, on the rule that neither side ever changes
 * them once handed over: the library builds a new record for every change and changes
 * nothing it read. A caller that means to change a record it got must copy it first.
 */
export class MemoryRecordStore implements RecordStore {
  readonly #slots = new Map<string, Slot>();
  readonly #queue = new SubmitQueue();
  readonly #members = new QueueMembers();
  readonly #reports = new ReportQueue();
  readonly #timers = new Timers();
  readonly #carrierIds = new CarrierIdIndex();
  readonly #externalIds = new ExternalIdIndex();
  readonly #list = new ListIndex(this.#externalIds);
  readonly #reportLog = new ReportLog();
  readonly #idempotency = new IdempotencyRecords();
  readonly #balances = new Map<string, number>();
  readonly #counters = new UnitCounters();
  /** Every index of the slots, which each insert, write and delete keeps up. */
  readonly #indexes: readonly SlotIndex[] = [
    this.#queue,
    this.#reports,
    this.#timers,
    this.#externalIds,
    this.#reportLog,
    ...this.#members.indexes,
    ...this.#list.indexes,
  ];
  #seq = 0;
  /** See {@link RecordStore.inbound}. */
  readonly inbound = new MemoryInbound();
  /** The last report key given (`MessageWrite.reported`). */
  #reportKey = 0;

  /** Nothing to prepare; present so callers can treat every store alike. */
  async ready(): Promise<void> {}

  /** Nothing to release; the data stays until the instance is garbage-collected. */
  async close(): Promise<void> {}

  /** See {@link RecordStore.insertMessages}. */
  async insertMessages(rows: readonly MessageRow[], guard?: InsertGuard): Promise<InsertRefusal | InsertCounted | undefined> {
    // Most batches hold one row (one message per request): no set of the batch's refs then.
    const refs = rows.length > 1 ? new Set<string>() : undefined;
    for (const row of rows) {
      const ref = row.record.ref;
      if (this.#slots.has(ref) || refs?.has(ref) === true) throw new Error(`MemoryRecordStore: message ${JSON.stringify(ref)} is already stored`);
      refs?.add(ref);
    }
    const idempotency = guard?.idempotency;
    if (idempotency !== undefined && this.#idempotency.find(idempotency.principalId, idempotency.key, idempotency.createdAt) !== null) {
      return { refused: 'key-taken' };
    }
    const credit = guard?.credit;
    if (credit !== undefined && this.#balance(credit.principalId) < credit.units) {
      return { refused: 'insufficient-credit', balance: this.#balance(credit.principalId) };
    }
    const counters = guard?.counters;
    const over = counters === undefined ? -1 : this.#counters.firstOver(counters);
    if (over >= 0) return { refused: 'limit-reached', counter: over };
    // Every check passed: from here on the insert only writes, so it is stored whole.
    if (credit !== undefined) this.#balances.set(credit.principalId, this.#balance(credit.principalId) - credit.units);
    if (idempotency !== undefined) this.#idempotency.take(idempotency);
    for (const row of rows) this.#insert(row);
    return counters === undefined ? undefined : { counted: this.#counters.add(counters) };
  }

  /** See {@link RecordStore.getMessage}. */
  async getMessage(ref: string): Promise<MessageRow | null> {
    return this.#slots.get(ref)?.row() ?? null;
  }

  /** See {@link RecordStore.findByExternalId}. */
  async findByExternalId(principalId: string, externalId: string, limit: number): Promise<MessageRow[]> {
    return this.#externalIds.slots(principalId, externalId).slice(0, Math.max(0, limit)).map((slot) => slot.row());
  }

  /** See {@link RecordStore.listMessages}: the narrowest of the list index's orders, walked from the page's start. */
  async listMessages(query: MessageListQuery): Promise<MessageRow[]> {
    return this.#list.list(query);
  }

  /** See {@link RecordStore.listCallbacks}: the list index's lists of each report state, merged. */
  async listCallbacks(query: CallbackListQuery): Promise<MessageRow[]> {
    return this.#list.listCallbacks(query);
  }

  /** See {@link RecordStore.readReports}. */
  async readReports(principalId: string, after: number | null, limit: number): Promise<ReportedRow[]> {
    return this.#reportLog.read(principalId, after, limit);
  }

  /** See {@link RecordStore.findByRecipient}. */
  async findByRecipient(recipient: string, fromPrincipal: string | null, limit: number): Promise<MessageRow[]> {
    return this.#list.byRecipient(recipient, fromPrincipal, limit);
  }

  /** See {@link RecordStore.scanIdempotency}. */
  async scanIdempotency(after: IdempotencyCursor | null, limit: number): Promise<IdempotencyRecord[]> {
    return this.#idempotency.scan(after, Math.max(0, limit));
  }

  /** See {@link RecordStore.rewriteIdempotency}. */
  async rewriteIdempotency(records: readonly IdempotencyRecord[]): Promise<number> {
    return this.#idempotency.rewrite(records);
  }

  /** See {@link RecordStore.findByCarrierId}. */
  async findByCarrierId(carrierIds: readonly string[]): Promise<MessageRow | null> {
    return this.#carrierIds.find(carrierIds)?.row() ?? null;
  }

  /** See {@link RecordStore.claimMessages}. */
  async claimMessages(options: ClaimOptions): Promise<MessageRow[]> {
    return this.#queue.claim(options);
  }

  /** See {@link RecordStore.claimReports}. */
  async claimReports(options: ClaimOptions): Promise<MessageRow[]> {
    return this.#reports.claim(options);
  }

  /** See {@link RecordStore.dueMessages}. */
  async dueMessages(timer: Timer, at: number, limit: number): Promise<MessageRow[]> {
    return this.#timers.due(timer, at, Math.max(0, limit));
  }

  /** See {@link RecordStore.queueEnds}. */
  async queueEnds(queue: number, principalId: string, now: number): Promise<{ principalLast: number | null; head: number | null }> {
    return {
      principalLast: this.#members.principalLast(queue, principalId),
      head: this.#queue.head(queue, now) ?? this.#members.greatest(queue),
    };
  }

  /** See {@link RecordStore.countQueued}. */
  async countQueued(principalId?: string): Promise<QueueCount> {
    return this.#members.count(principalId);
  }

  /** See {@link RecordStore.writeMessages}. */
  async writeMessages(writes: readonly MessageWrite[]): Promise<boolean[]> {
    return writes.map((write) => this.#write(write));
  }

  /** See {@link RecordStore.deleteMessages}. */
  async deleteMessages(refs: readonly string[]): Promise<number> {
    let deleted = 0;
    for (const ref of refs) {
      const slot = this.#slots.get(ref);
      if (slot === undefined) continue;
      this.#slots.delete(ref);
      for (const index of this.#indexes) index.remove(slot);
      this.#carrierIds.remove(slot);
      deleted++;
    }
    return deleted;
  }

  /** See {@link RecordStore.findIdempotency}. */
  findIdempotency(principalId: string, key: string, now: number): IdempotencyRecord | null {
    return this.#idempotency.find(principalId, key, now);
  }

  /** See {@link RecordStore.purgeIdempotency}. */
  async purgeIdempotency(now: number, limit: number): Promise<number> {
    return this.#idempotency.purge(now, limit);
  }

  /** See {@link RecordStore.addCredit}. */
  async addCredit(principalId: string, units: number): Promise<number> {
    const balance = this.#balance(principalId) + units;
    this.#balances.set(principalId, balance);
    return balance;
  }

  /** See {@link RecordStore.creditBalance}. */
  async creditBalance(principalId: string): Promise<number> {
    return this.#balance(principalId);
  }

  /** See {@link RecordStore.countedUnits}. */
  async countedUnits(principalId: string, period: string): Promise<number> {
    return this.#counters.value(principalId, period);
  }

  /** See {@link RecordStore.purgeCounters}. */
  async purgeCounters(live: readonly string[], limit: number): Promise<number> {
    return this.#counters.purge(new Set(live), Math.max(0, limit));
  }

  #balance(principalId: string): number {
    return this.#balances.get(principalId) ?? 0;
  }

  /** Stores `row` at version 0 with the next `seq`, in every index. */
  #insert(row: MessageRow): void {
    const slot = new Slot(row, this.#seq++);
    this.#slots.set(row.record.ref, slot);
    for (const index of this.#indexes) index.add(slot);
    if (row.carrierIds.length > 0) this.#carrierIds.add(slot, row.carrierIds);
  }

  /** Applies `write` if its row is still at the expected version; moves it in the indexes its changes touch. */
  #write(write: MessageWrite): boolean {
    const after = write.row;
    const slot = this.#slots.get(after.record.ref);
    if (slot === undefined || slot.version !== write.expectedVersion) return false;
    const principalId = slot.record.principalId;
    // Out of each index the write moves it in, while the slot still holds the row it was placed with.
    const moving = this.#indexes.filter((index) => index.moves(slot, after) || (write.reported === true && index === this.#reportLog));
    for (const index of moving) index.remove(slot);
    this.#carrierIds.update(slot, after.carrierIds);
    slot.store(after, write.expectedVersion + 1);
    if (write.reported === true) slot.reportKey = ++this.#reportKey;
    for (const index of moving) index.add(slot);
    if (write.refund !== undefined && write.refund !== 0) {
      this.#balances.set(principalId, this.#balance(principalId) + write.refund);
    }
    return true;
  }
}
