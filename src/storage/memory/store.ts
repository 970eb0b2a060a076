/**
 * The memory record store, `MemoryRecordStore`: the {@link RecordStore} primitives over plain
 * Maps and heaps in this process. The class keeps the rows and the guards of an insert;
 * the submit queue a claim takes from is in submit-queue.ts, the pending reports in
 * report-queue.ts, the sweeps' timers in timers.ts, the counts of queued rows in
 * queue-members.ts, and the lookups by carrier id and external id in lookups.ts.
 *
 * @module
 */
import type { ClaimOptions } from '../claim-options.js';
import type { QueueCount } from '../contract.js';
import type { IdempotencyRecord } from '../idempotency-record.js';
import { delegateInbound, type InboundStorage } from '../inbound-record.js';
import { IdempotencyRecords } from './idempotency.js';
import { MemoryInbound } from './inbound.js';
import type { InsertGuard, InsertRefusal, MessageRow, MessageWrite, RecordStore, Timer } from '../record-store.js';
import { CarrierIdIndex, ExternalIdIndex } from './lookups.js';
import { QueueMembers } from './queue-members.js';
import { ReportQueue } from './report-queue.js';
import { Slot } from './slot.js';
import { movesInQueue, SubmitQueue } from './submit-queue.js';
import { Timers } from './timers.js';

/**
 * A {@link RecordStore} in this process's memory: fast, and gone with the process. Every
 * method is one synchronous step behind its promise, so each is atomic. A claim of `k` rows
 * costs O(k log n) whatever the backlog (n rows) and however many principals share it;
 * `countQueued` and `queueEnds` cost O(1) amortized; lookups by ref, carrier id and external
 * id are Map reads. It also keeps inbound (MO) messages and opt-outs ({@link InboundStorage}),
 * as `MemoryStorage` does.
 *
 * Copies: the store keeps the row objects it is given and hands them out as they are, on
 * the rule that neither side ever changes a row (or anything in it) once handed over. The
 * library builds a new row for every write and changes nothing it read. So the store never
 * changes a row it holds: an insert keeps a shallow copy (with its `version` and `seq`
 * set), a write keeps the given row (a shallow copy only when its `version` or `seq` needs
 * setting), and a claim stores and returns a new row object (`version` one higher, its
 * lease or `reportDueAt` set); the row read before is left as it was. A caller that means
 * to change a row it got must copy it first.
 */
export class MemoryRecordStore implements RecordStore {
  readonly #slots = new Map<string, Slot>();
  readonly #queue = new SubmitQueue();
  readonly #members = new QueueMembers();
  readonly #reports = new ReportQueue();
  readonly #timers = new Timers();
  readonly #carrierIds = new CarrierIdIndex();
  readonly #externalIds = new ExternalIdIndex();
  readonly #idempotency = new IdempotencyRecords();
  readonly #balances = new Map<string, number>();
  #seq = 0;

  constructor() {
    delegateInbound(this, new MemoryInbound());
  }

  /** Nothing to prepare; present so callers can treat every store alike. */
  async ready(): Promise<void> {}

  /** Nothing to release; the data stays until the instance is garbage-collected. */
  async close(): Promise<void> {}

  /** See {@link RecordStore.insertMessages}. */
  async insertMessages(rows: readonly MessageRow[], guard?: InsertGuard): Promise<InsertRefusal | undefined> {
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
    if (credit !== undefined) {
      const balance = this.#balance(credit.principalId);
      if (balance < credit.units) return { refused: 'insufficient-credit', balance };
      this.#balances.set(credit.principalId, balance - credit.units);
    }
    if (idempotency !== undefined) this.#idempotency.take(idempotency);
    for (const row of rows) this.#insert({ ...row, version: 0, seq: this.#seq++ });
    return undefined;
  }

  /** See {@link RecordStore.getMessage}. */
  async getMessage(ref: string): Promise<MessageRow | null> {
    return this.#slots.get(ref)?.row ?? null;
  }

  /** See {@link RecordStore.findByExternalId}. */
  async findByExternalId(principalId: string, externalId: string, limit: number): Promise<MessageRow[]> {
    return this.#externalIds.find(principalId, externalId, limit);
  }

  /** See {@link RecordStore.findByCarrierId}. */
  async findByCarrierId(carrierIds: readonly string[]): Promise<MessageRow | null> {
    return this.#carrierIds.find(carrierIds)?.row ?? null;
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
      this.#queue.remove(slot);
      this.#members.remove(slot);
      this.#reports.remove(slot);
      this.#timers.remove(slot);
      this.#carrierIds.remove(slot, slot.row.carrierIds);
      this.#externalIds.remove(slot, slot.row);
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

  #balance(principalId: string): number {
    return this.#balances.get(principalId) ?? 0;
  }

  /** Stores `row` (its own object, with `version` and `seq` set) in every index. */
  #insert(row: MessageRow): void {
    const slot = new Slot(row);
    this.#slots.set(row.record.ref, slot);
    this.#queue.place(slot);
    this.#members.add(slot);
    this.#reports.place(slot);
    this.#timers.place(slot);
    if (row.carrierIds.length > 0) this.#carrierIds.add(slot, row.carrierIds);
    this.#externalIds.add(slot);
  }

  /** Applies `write` if its row is still at the expected version; moves it in the indexes its changes touch. */
  #write(write: MessageWrite): boolean {
    const slot = this.#slots.get(write.row.record.ref);
    if (slot === undefined || slot.row.version !== write.expectedVersion) return false;
    const before = slot.row;
    const version = write.expectedVersion + 1;
    const after = write.row.version === version && write.row.seq === before.seq ? write.row : { ...write.row, version, seq: before.seq };
    // Out of each heap whose order the write changes, while the slot still holds the row it was placed with.
    const moves = movesInQueue(before, after);
    const recounts = QueueMembers.changes(before, after);
    const reports = ReportQueue.changes(before, after);
    const timers = Timers.changes(before, after);
    if (moves) this.#queue.remove(slot);
    if (recounts) this.#members.remove(slot);
    if (reports) this.#reports.remove(slot);
    if (timers) this.#timers.remove(slot);
    slot.store(after);
    if (moves) this.#queue.place(slot);
    if (recounts) this.#members.add(slot);
    if (reports) this.#reports.place(slot);
    if (timers) this.#timers.place(slot);
    this.#carrierIds.update(slot, before.carrierIds, after.carrierIds);
    if (ExternalIdIndex.changes(before, after)) {
      this.#externalIds.remove(slot, before);
      this.#externalIds.add(slot);
    }
    if (write.refund !== undefined && write.refund !== 0) {
      const principalId = before.record.principalId;
      this.#balances.set(principalId, this.#balance(principalId) + write.refund);
    }
    return true;
  }
}

// The inbound methods ({@link InboundStorage}) are set by the constructor (`delegateInbound`);
// this declares them on the class.
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export interface MemoryRecordStore extends InboundStorage {}
