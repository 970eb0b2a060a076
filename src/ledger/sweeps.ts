/**
 * The ledger's time-driven steps, each on the rows whose timer has come due
 * (`RecordStore.dueMessages`): scheduled messages joining the queue, queued ones past their
 * validity, submitted ones whose receipts never came, ended ones whose text is due to be
 * redacted, and ended ones past retention; and the sender's cancel. Each decides again on the row it writes (compare-and-set), so two
 * instances sweeping at once never move one message twice.
 *
 * @module
 */
import { leaseBarsCancel, validityElapsed, CANCELLED, VALIDITY_ELAPSED } from '../lifecycle/timing.js';
import type { CancelResult, MessageState, Outcome, Transition } from '../storage/contract.js';
import type { MessageRow, RecordStore } from '../storage/record-store.js';
import type { Decision, RowWriter } from './compare-and-set.js';
import { copyRecord, recordFields } from './copy-record.js';
import { fairPlaces, type RecentTags } from './fair-place.js';
import { endRow, nextRow, rankOf } from './rows.js';
import { redactsAt, redactText } from '../lifecycle/retain-text.js';

/** Rows a purge reads and deletes per step (see {@link Sweeps.purge}). */
const PURGE_PAGE = 500;

/** Whether a lease ending at `leaseUntil` still holds at `now`. */
function leaseIsLive(leaseUntil: number | null, now: number): boolean {
  return leaseUntil !== null && leaseUntil > now;
}

/** The decision to end `row` with `outcome` at `now`. */
function ending(row: MessageRow, outcome: Outcome, now: number): Decision<Transition> {
  const ended = endRow(row, outcome, now);
  return { result: ended.transition, row: ended.row, refund: ended.refund };
}

/** A rule ending a row that `applies` to with `outcome` at `now`, and leaving any other. */
function endIf(applies: (row: MessageRow) => boolean, outcome: Outcome, now: number) {
  return (row: MessageRow | null): Decision<Transition | null> => (row === null || !applies(row) ? { result: null } : ending(row, outcome, now));
}

function isTransition(transition: Transition | null): transition is Transition {
  return transition !== null;
}

/** The time-driven steps and the cancel of a ledger over `store` (see the module's TSDoc). */
export class Sweeps {
  constructor(
    private readonly store: RecordStore,
    private readonly writer: RowWriter,
    private readonly recent: RecentTags,
  ) {}

  /**
   * Queues the scheduled messages due at `now`, up to `limit`, earliest first, each placed
   * in the fair order as if accepted at `now` with the weight it was accepted with; ends
   * `VALIDITY_ELAPSED` instead those whose validity ended first.
   */
  async promoteScheduled(now: number, limit: number): Promise<Transition[]> {
    const due = await this.store.dueMessages('scheduled', now, Math.max(0, limit));
    if (due.length === 0) return [];
    const joining = due.filter((row) => !validityElapsed(row.record.validUntil, now));
    const { keys, release } = await fairPlaces(
      this.store,
      this.recent,
      joining.map((row) => ({ principalId: row.record.principalId, rank: rankOf(row.record.priority), weight: row.book.weight })),
      now,
    );
    const keyOf = new Map(joining.map((row, i) => [row.record.ref, keys[i]!]));
    const writes = this.writer.updateAll(due, (row): Decision<Transition | null> => {
      if (row === null || row.record.state !== 'scheduled') return { result: null };
      const orderKey = keyOf.get(row.record.ref);
      if (orderKey === undefined || validityElapsed(row.record.validUntil, now)) return ending(row, VALIDITY_ELAPSED, now);
      const record = recordFields(row.record);
      record.state = 'queued';
      record.updatedAt = now;
      return {
        result: { message: copyRecord(record), previousState: 'scheduled' },
        row: nextRow(row, { record, queue: rankOf(record.priority), orderKey, dueAt: now }),
      };
    });
    const transitions = await writes.finally(release);
    return transitions.filter(isTransition);
  }

  /**
   * Ends `VALIDITY_ELAPSED` up to `limit` queued messages whose validity ended by `now` and
   * that no live lease holds. Those a lease holds are passed over (their owner is about to
   * submit or give them back), so more due rows are read until `limit` are found or none
   * are left.
   */
  async expireUnsent(now: number, limit: number): Promise<Transition[]> {
    if (limit <= 0) return [];
    let page = limit;
    for (;;) {
      const due = await this.store.dueMessages('validity', now, page);
      const free = due.filter((row) => !leaseIsLive(row.leaseUntil, now));
      if (free.length >= limit || due.length < page) {
        const expire = endIf((row) => row.record.state === 'queued' && validityElapsed(row.record.validUntil, now) && !leaseIsLive(row.leaseUntil, now), VALIDITY_ELAPSED, now);
        return (await this.writer.updateAll(free.slice(0, limit), expire)).filter(isTransition);
      }
      page = limit + (due.length - free.length);
    }
  }

  /**
   * Ends with `outcome` up to `limit` submitted messages unchanged since before `before`,
   * oldest first, as `finish` would.
   */
  async expireOverdue(before: number, limit: number, outcome: Outcome, now: number): Promise<Transition[]> {
    const due = await this.store.dueMessages('receipt', before - 1, Math.max(0, limit));
    if (due.length === 0) return [];
    return (await this.writer.updateAll(due, endIf((row) => row.record.state === 'submitted' && row.record.updatedAt < before, outcome, now))).filter(isTransition);
  }

  /**
   * Deletes up to `limit` ended messages without a pending report, last changed before
   * `before`, oldest first: a page at a time, so that a large batch (a host may set 20,000)
   * is many short steps, each read and deleted before the next, not one long read.
   */
  async purge(before: number, limit: number): Promise<number> {
    let purged = 0;
    while (purged < limit) {
      const page = Math.min(PURGE_PAGE, limit - purged);
      const due = await this.store.dueMessages('purge', before - 1, page);
      if (due.length === 0) break;
      const deleted = await this.store.deleteMessages(due.map((row) => row.record.ref));
      purged += deleted;
      if (due.length < page || deleted === 0) break;
    }
    return purged;
  }

  /**
   * Redacts the texts of up to `limit` ended messages whose `retainText` (`days:N`) came due
   * by `now`, earliest first; each then waits for its purge. Returns how many were redacted.
   */
  async redactTexts(now: number, limit: number): Promise<number> {
    const due = await this.store.dueMessages('redact', now, Math.max(0, limit));
    if (due.length === 0) return 0;
    const done = await this.writer.updateAll(due, (row): Decision<boolean> => {
      if (row === null || !redactsAt(row.record, now)) return { result: false };
      const record = recordFields(row.record);
      redactText(record);
      return { result: true, row: nextRow(row, { record }) };
    });
    return done.filter(Boolean).length;
  }

  /**
   * Cancels each of the principal's `refs` that is scheduled, or queued with no part
   * submitted and no lease barring it (`leaseBarsCancel`); one compare-and-set write each.
   */
  async cancelMessages(principalId: string, refs: readonly string[], now: number): Promise<CancelResult> {
    const result: CancelResult = { cancelled: [], notCancelled: [] };
    for (const ref of new Set(refs)) {
      const outcome = await this.writer.update(ref, (row): Decision<Transition | { ref: string; state: MessageState } | null> => {
        if (row === null || row.record.principalId !== principalId) return { result: null };
        const record = row.record;
        const unsent = record.state === 'queued' && !leaseBarsCancel(row.leaseUntil, now) && record.parts.every((part) => part.carrierId === null);
        if (record.state === 'scheduled' || unsent) return ending(row, CANCELLED, now);
        return { result: { ref, state: record.state } };
      });
      if (outcome === null) continue;
      if ('message' in outcome) result.cancelled.push(outcome);
      else result.notCancelled.push(outcome);
    }
    return result;
  }
}
