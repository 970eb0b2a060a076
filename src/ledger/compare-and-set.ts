/**
 * The compare-and-set loop every change of a message goes through: read the row (or take
 * the one this ledger last wrote, known-rows.ts), let a rule decide the new row, write it only if the stored
 * row is still at the version read, and when another writer got there first, read again and
 * decide again. A rule is a pure function of the row, so deciding twice is safe.
 *
 * @module
 */
import type { MessageRow, MessageWrite, RecordStore } from '../storage/record-store.js';
import type { KnownRows } from './known-rows.js';
import { isTerminal } from '../lifecycle/states.js';

/** How many times a change is decided again after losing a write before it gives up. */
export const MAX_ATTEMPTS = 20;

/**
 * What a rule decided for a row: to leave it (`row` absent) or to write `row` (one version
 * higher, see `nextRow`) with `refund` units given back in the same step; `result` is what
 * the caller is told once it is done.
 */
export type Decision<T> = { result: T; row?: undefined; refund?: undefined } | { result: T; row: MessageRow; refund?: number };

/** A rule: what to do with the row of a ref (`null`: none stored). */
export type Rule<T> = (row: MessageRow | null) => Decision<T>;

/** Thrown when a change lost every write to other writers. */
export class WriteContentionError extends Error {
  constructor(ref: string) {
    super(`ledger: message ${JSON.stringify(ref)} changed under ${MAX_ATTEMPTS} writes in a row; gave up`);
    this.name = 'WriteContentionError';
  }
}

/** Applies rules to rows by compare-and-set (see the module's TSDoc). */
export class RowWriter {
  /**
   * `logsReports`: whether the store keeps the report log (`readReports`); each write that
   * ends a message then says so, and the store gives it its report key in the same step.
   */
  constructor(
    private readonly store: RecordStore,
    private readonly known: KnownRows,
    private readonly logsReports = false,
  ) {}

  /**
   * Applies `rule` to the row of `ref` until its write holds, or it decides to leave the
   * row as it read it from the store. A row known here (`known`, else the one this ledger
   * last wrote) is tried without a read; a decision to leave a row is trusted only from a
   * fresh read.
   */
  update<T>(ref: string, rule: Rule<T>, known: MessageRow | undefined = this.known.get(ref)): Promise<T> {
    if (known !== undefined) return this.#settle(ref, known, false, rule);
    return this.store.getMessage(ref).then((row) => this.#settle(ref, row, true, rule));
  }

  /** Applies `rule` to `row`, just read from the store, as {@link update} would. */
  updateRead<T>(row: MessageRow, rule: Rule<T>): Promise<T> {
    return this.#settle(row.record.ref, row, true, rule);
  }

  /**
   * Applies `rule` to each of `rows`, just read from the store, in one batch of writes; a
   * write that loses is retried alone ({@link update}). Resolves with each row's result, in
   * order.
   */
  async updateAll<T>(rows: readonly MessageRow[], rule: Rule<T>): Promise<T[]> {
    const decisions = rows.map((row) => rule(row));
    const writes: MessageWrite[] = [];
    const written: number[] = [];
    decisions.forEach((decision, i) => {
      if (decision.row === undefined) return;
      writes.push(toWrite(decision.row, rows[i]!, decision.refund, this.logsReports));
      written.push(i);
    });
    const results = decisions.map((decision) => decision.result);
    if (writes.length === 0) return results;
    const applied = await this.store.writeMessages(writes);
    for (const [w, i] of written.entries()) {
      const row = rows[i]!;
      if (applied[w] === true) this.known.remember(writes[w]!.row);
      else {
        this.known.forget(row.record.ref);
        results[i] = await this.#settle(row.record.ref, await this.store.getMessage(row.record.ref), true, rule);
      }
    }
    return results;
  }

  async #settle<T>(ref: string, row: MessageRow | null, fresh: boolean, rule: Rule<T>): Promise<T> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const decision = rule(row);
      if (decision.row === undefined) {
        if (fresh) return decision.result;
      } else {
        const applied = await this.store.writeMessages([toWrite(decision.row, row!, decision.refund, this.logsReports)]);
        if (applied[0] === true) {
          // Only once applied: a row kept before its write holds could share its version with
          // another writer's row, and a write decided from it would pass that row's check.
          this.known.remember(decision.row);
          return decision.result;
        }
        this.known.forget(ref);
      }
      row = await this.store.getMessage(ref);
      fresh = true;
    }
    throw new WriteContentionError(ref);
  }
}

/**
 * The write of `row` over `read` (the row it was decided from), with the carrier ids it adds
 * and the row it replaces; with `logsReports`, whether it ends the message.
 */
function toWrite(row: MessageRow, read: MessageRow, refund: number | undefined, logsReports: boolean): MessageWrite {
  const write: MessageWrite = { row, expectedVersion: read.version, addedCarrierIds: addedCarrierIds(row, read), previous: read };
  if (refund !== undefined && refund !== 0) write.refund = refund;
  if (logsReports && !isTerminal(read.record.state) && isTerminal(row.record.state)) write.reported = true;
  return write;
}

const NONE: readonly string[] = [];

/** The carrier ids of `row` that `read` lacks: the write applies only over `read`'s version, whose ids are stored. */
function addedCarrierIds(row: MessageRow, read: MessageRow): readonly string[] {
  if (row.carrierIds === read.carrierIds) return NONE;
  const added = row.carrierIds.filter((id) => !read.carrierIds.includes(id));
  return added.length === 0 ? NONE : added;
}
