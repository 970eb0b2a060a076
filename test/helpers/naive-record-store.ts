/**
 * The simplest correct {@link RecordStore}, for tests: plain Maps, every query a scan and a
 * sort of everything stored, and `structuredClone` copies of whatever goes in or comes out.
 * Slow on purpose and obviously right, so that a test that fails over it points at the
 * library's rules (the ledger), never at a store's cleverness; and a model to compare a
 * real store's answers with.
 *
 * @module
 */
import type { IdempotencyRecord } from '../../src/storage/idempotency-record.js';
import type { ClaimOptions } from '../../src/storage/claim-options.js';
import type { QueueCount } from '../../src/storage/contract.js';
import type { InsertGuard, InsertRefusal, MessageRow, MessageWrite, RecordStore, Timer } from '../../src/storage/record-store.js';

/** Whether a claim at `now` may take `row`: in the submit queue, due, unleased and still valid. */
function claimable(row: MessageRow, now: number): boolean {
  const validUntil = row.record.validUntil;
  return row.queue !== null && row.dueAt <= now && (row.leaseUntil === null || row.leaseUntil <= now) && (validUntil === null || validUntil === undefined || validUntil > now);
}

/** The simplest correct record store (see the module's TSDoc); one instance is one database. */
export class NaiveRecordStore implements RecordStore {
  /** The rows by ref, as stored (never handed out: only copies leave). */
  readonly #rows = new Map<string, MessageRow>();
  /** Idempotency records by principal and key (two maps, so no separator is needed). */
  readonly #keys = new Map<string, Map<string, IdempotencyRecord>>();
  readonly #balances = new Map<string, number>();
  #seq = 0;
  /** Each carrier id's row given it last (a carrier may reuse an id for a later message). */
  readonly #givenLast = new Map<string, string>();

  /** Records that `row` was given each of its carrier ids that `before` (its stored version) did not have. */
  #give(row: MessageRow, before?: MessageRow): void {
    for (const carrierId of row.carrierIds) if (before?.carrierIds.includes(carrierId) !== true) this.#givenLast.set(carrierId, row.record.ref);
  }

  async insertMessages(rows: readonly MessageRow[], guard?: InsertGuard): Promise<InsertRefusal | undefined> {
    const refs = new Set<string>();
    for (const row of rows) {
      if (this.#rows.has(row.record.ref) || refs.has(row.record.ref)) throw new Error(`NaiveRecordStore: ref ${JSON.stringify(row.record.ref)} already stored`);
      refs.add(row.record.ref);
    }
    const idempotency = guard?.idempotency;
    if (idempotency !== undefined) {
      const held = this.#keys.get(idempotency.principalId)?.get(idempotency.key);
      if (held !== undefined && held.expiresAt > idempotency.createdAt) return { refused: 'key-taken' };
    }
    const credit = guard?.credit;
    if (credit !== undefined) {
      const balance = this.#balances.get(credit.principalId) ?? 0;
      if (balance < credit.units) return { refused: 'insufficient-credit', balance };
      this.#balances.set(credit.principalId, balance - credit.units);
    }
    if (idempotency !== undefined) {
      let ofPrincipal = this.#keys.get(idempotency.principalId);
      if (ofPrincipal === undefined) this.#keys.set(idempotency.principalId, (ofPrincipal = new Map()));
      ofPrincipal.set(idempotency.key, structuredClone(idempotency));
    }
    for (const row of rows) {
      this.#rows.set(row.record.ref, { ...structuredClone(row), version: 0, seq: this.#seq++ });
      this.#give(row);
    }
    return undefined;
  }

  async getMessage(ref: string): Promise<MessageRow | null> {
    const row = this.#rows.get(ref);
    return row === undefined ? null : structuredClone(row);
  }

  async findByExternalId(principalId: string, externalId: string, limit: number): Promise<MessageRow[]> {
    return this.#select((row) => row.record.principalId === principalId && row.record.externalId === externalId, (a, b) => b.record.createdAt - a.record.createdAt || b.seq - a.seq, limit);
  }

  async findByCarrierId(carrierIds: readonly string[]): Promise<MessageRow | null> {
    for (const carrierId of carrierIds) {
      const last = this.#rows.get(this.#givenLast.get(carrierId) ?? '');
      if (last?.carrierIds.includes(carrierId) === true) return structuredClone(last);
      for (const row of this.#rows.values()) if (row.carrierIds.includes(carrierId)) return structuredClone(row);
    }
    return null;
  }

  async claimMessages(options: ClaimOptions): Promise<MessageRow[]> {
    const taken = this.#stored((row) => claimable(row, options.now), (a, b) => a.queue! - b.queue! || a.orderKey - b.orderKey || a.seq - b.seq, options.limit);
    for (const row of taken) {
      row.leaseOwner = options.owner;
      row.leaseUntil = options.now + options.leaseMs;
      row.version++;
    }
    return taken.map((row) => structuredClone(row));
  }

  async claimReports(options: ClaimOptions): Promise<MessageRow[]> {
    const taken = this.#stored((row) => row.reportDueAt !== null && row.reportDueAt <= options.now, (a, b) => a.reportDueAt! - b.reportDueAt! || a.orderKey - b.orderKey || a.seq - b.seq, options.limit);
    for (const row of taken) {
      row.reportDueAt = options.now + options.leaseMs;
      row.version++;
    }
    return taken.map((row) => structuredClone(row));
  }

  async dueMessages(timer: Timer, at: number, limit: number): Promise<MessageRow[]> {
    return this.#select((row) => row.timer === timer && row.timerAt !== null && row.timerAt <= at, (a, b) => a.timerAt! - b.timerAt! || a.seq - b.seq, limit);
  }

  async queueEnds(queue: number, principalId: string, now: number): Promise<{ principalLast: number | null; head: number | null }> {
    let principalLast: number | null = null;
    let head: number | null = null;
    let last: number | null = null;
    for (const row of this.#rows.values()) {
      if (row.queue !== queue) continue;
      if (row.record.principalId === principalId && (principalLast === null || row.orderKey > principalLast)) principalLast = row.orderKey;
      if (last === null || row.orderKey > last) last = row.orderKey;
      if (claimable(row, now) && (head === null || row.orderKey < head)) head = row.orderKey;
    }
    return { principalLast, head: head ?? last };
  }

  async countQueued(principalId?: string): Promise<QueueCount> {
    const count: QueueCount = { transactional: 0, bulk: 0, oldestAcceptedAt: null };
    for (const row of this.#rows.values()) {
      if (row.queue === null || (principalId !== undefined && row.record.principalId !== principalId)) continue;
      if (row.queue === 0) count.transactional++;
      else count.bulk++;
      const acceptedAt = row.record.sendAt ?? row.record.createdAt;
      if (count.oldestAcceptedAt === null || acceptedAt < count.oldestAcceptedAt) count.oldestAcceptedAt = acceptedAt;
    }
    return count;
  }

  async writeMessages(writes: readonly MessageWrite[]): Promise<boolean[]> {
    return writes.map((write) => {
      const stored = this.#rows.get(write.row.record.ref);
      if (stored === undefined || stored.version !== write.expectedVersion) return false;
      this.#rows.set(stored.record.ref, { ...structuredClone(write.row), version: write.expectedVersion + 1, seq: stored.seq });
      this.#give(write.row, stored);
      if (write.refund !== undefined && write.refund !== 0) {
        const principalId = stored.record.principalId;
        this.#balances.set(principalId, (this.#balances.get(principalId) ?? 0) + write.refund);
      }
      return true;
    });
  }

  async deleteMessages(refs: readonly string[]): Promise<number> {
    let deleted = 0;
    for (const ref of new Set(refs)) if (this.#rows.delete(ref)) deleted++;
    return deleted;
  }

  findIdempotency(principalId: string, key: string, now: number): IdempotencyRecord | null {
    const held = this.#keys.get(principalId)?.get(key);
    return held === undefined || held.expiresAt <= now ? null : structuredClone(held);
  }

  async purgeIdempotency(now: number, limit: number): Promise<number> {
    const expired = [...this.#keys.values()].flatMap((ofPrincipal) => [...ofPrincipal.values()]).filter((record) => record.expiresAt <= now);
    expired.sort((a, b) => a.expiresAt - b.expiresAt);
    const purged = expired.slice(0, Math.max(0, limit));
    for (const record of purged) this.#keys.get(record.principalId)!.delete(record.key);
    return purged.length;
  }

  async addCredit(principalId: string, units: number): Promise<number> {
    const balance = (this.#balances.get(principalId) ?? 0) + units;
    this.#balances.set(principalId, balance);
    return balance;
  }

  async creditBalance(principalId: string): Promise<number> {
    return this.#balances.get(principalId) ?? 0;
  }

  /** Copies of the rows `keep` selects, in `order`, at most `limit`. */
  #select(keep: (row: MessageRow) => boolean, order: (a: MessageRow, b: MessageRow) => number, limit: number): MessageRow[] {
    return this.#stored(keep, order, limit).map((row) => structuredClone(row));
  }

  /** The stored rows themselves that `keep` selects, in `order`, at most `limit` (for a claim to change). */
  #stored(keep: (row: MessageRow) => boolean, order: (a: MessageRow, b: MessageRow) => number, limit: number): MessageRow[] {
    return [...this.#rows.values()].filter(keep).sort(order).slice(0, Math.max(0, limit));
  }
}
