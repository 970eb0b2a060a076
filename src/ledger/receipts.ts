/**
 * The carrier's side of a message's life, as rules on a row: recording a part's submission
 * (`Storage.recordSubmission`) and applying a part's receipt (`Storage.applyReceipt`),
 * each deciding the row's next version for the compare-and-set loop (compare-and-set.ts).
 *
 * @module
 */
import { foldParts } from '../lifecycle/states.js';
import type { MessageRecord, Outcome, PartReceipt, PartRecord, ReceiptResult, SubmissionResult } from '../storage/contract.js';
import type { MessageRow } from '../storage/record-store.js';
import type { Decision } from './compare-and-set.js';
import { copyRecord, recordFields } from './copy-record.js';
import { partReportsBorn, reportsPerPart } from './part-reports.js';
import { endRow, hasEnded, nextRow } from './rows.js';

/** How many distinct receipt outcomes are shared at most; beyond it a part keeps an outcome of its own. */
const SHARED_OUTCOMES_LIMIT = 32;
const sharedOutcomes: Outcome[] = [];

/**
 * An outcome equal to (`state`, `reason`, `description`) for a part to keep. Carriers send
 * few distinct outcomes, so the parts given equal ones share one object rather than keep a
 * copy each: a store may keep the very objects it is given for as long as the message is
 * retained. Safe to share: rows are never changed in place, and records leave as copies.
 */
function sharedOutcome(state: Outcome['state'], reason: Outcome['reason'], description: Outcome['description']): Outcome {
  for (const known of sharedOutcomes) if (known.state === state && known.reason === reason && known.description === description) return known;
  const outcome: Outcome = { state, reason, description };
  if (sharedOutcomes.length < SHARED_OUTCOMES_LIMIT) sharedOutcomes.push(outcome);
  return outcome;
}

/** `parts` with part `index` replaced by `part`. */
function withPart(parts: readonly PartRecord[], index: number, part: PartRecord): PartRecord[] {
  const next = parts.slice();
  next[index] = part;
  return next;
}

/**
 * Records that part `index` went to the carrier under `carrierId` at `now` (its
 * `submittedAt`, unless `carrierId` is the one it has already): the carrier id is kept
 * whatever the state (a receipt for it is then `late`, not `unknown`), the one it replaces
 * stays findable; a queued message moves to `submitted` with its last part, its lease ended.
 */
export function submissionRule(ref: string, index: number, carrierId: string, now: number) {
  return (row: MessageRow | null): Decision<SubmissionResult> => {
    const part = row?.record.parts[index];
    if (row === null || part === undefined) return { result: { kind: 'stale', ref } };
    const record = row.record;
    const queued = record.state === 'queued';
    const replaced = part.carrierId;
    if (replaced === carrierId && !queued) return { result: { kind: 'stale', ref } };
    const next = recordFields(record);
    if (replaced !== carrierId) next.parts = withPart(record.parts, index, { index: part.index, carrierId, outcome: part.outcome, submittedAt: now, endedAt: part.endedAt ?? null });
    const book = replaced === null || replaced === carrierId ? row.book : { ...row.book, replacedCarrierIds: [...row.book.replacedCarrierIds, { carrierId: replaced, index }] };
    const carrierIds = row.carrierIds.includes(carrierId) ? row.carrierIds : row.carrierIds.concat(carrierId);
    if (!queued) return { result: { kind: 'stale', ref }, row: nextRow(row, { record: next, book, carrierIds }) };
    next.updatedAt = now;
    if (hasUnsubmitted(next.parts)) return { result: { kind: 'part', ref }, row: nextRow(row, { record: next, book, carrierIds }) };
    next.state = 'submitted';
    return {
      result: { kind: 'submitted', transition: { message: copyRecord(next), previousState: 'queued' } },
      row: nextRow(row, { record: next, book, carrierIds, queue: null, leaseOwner: null, leaseUntil: null }),
    };
  };
}

/** Whether a part of `parts` is still to be submitted. */
function hasUnsubmitted(parts: readonly PartRecord[]): boolean {
  for (let i = 0; i < parts.length; i++) if (parts[i]!.carrierId === null) return true;
  return false;
}

/** The first of `carrierIds` that `row` has, or `undefined`. */
function matchedCarrierId(row: MessageRow, carrierIds: readonly string[]): string | undefined {
  for (const carrierId of carrierIds) if (row.carrierIds.includes(carrierId)) return carrierId;
  return undefined;
}

/** The index of the part of `row` that had `carrierId` (its latest or a replaced one), or -1. */
function partIndexOf(row: MessageRow, carrierId: string): number {
  const parts = row.record.parts;
  for (let i = 0; i < parts.length; i++) if (parts[i]!.carrierId === carrierId) return i;
  for (const replaced of row.book.replacedCarrierIds) if (replaced.carrierId === carrierId) return replaced.index;
  return -1;
}

/**
 * A part of a message reported part by part got its outcome, others still wait: its report
 * is born (part-reports.ts), leased under the receipt's `reportLease` if it has one and no
 * report of the message is pending.
 */
function partEnded(row: MessageRow, record: MessageRecord, index: number, receipt: PartReceipt): Decision<ReceiptResult> {
  const slot = partReportsBorn(row, row.book, record, [index], receipt.now, row.queue === null, receipt.reportLease);
  const next = nextRow(row, { record, book: slot.book, reportDueAt: slot.reportDueAt, orderKey: slot.orderKey ?? row.orderKey });
  const result: ReceiptResult = { kind: 'part', ref: record.ref };
  if (slot.leasedReport !== undefined) {
    result.leasedReport = slot.leasedReport;
    result.message = copyRecord(record);
  }
  return { result, row: next };
}

/**
 * Applies `receipt` to the part of `row` named by the first of its carrier-id spellings the
 * row has: `duplicate` when the part has its outcome already; else the part gets it, and
 * the message is `late` (already ended: nothing else changes), `part` (others still wait;
 * with one report per part, the part's report is born) or `terminal` (every part has one: `foldParts`, with the report born leased under the
 * receipt's `reportLease` if it has one).
 */
export function receiptRule(receipt: PartReceipt) {
  return (row: MessageRow | null): Decision<ReceiptResult> => {
    const carrierId = row === null ? undefined : matchedCarrierId(row, receipt.carrierIds);
    const index = row === null || carrierId === undefined ? -1 : partIndexOf(row, carrierId);
    if (row === null || index < 0) return { result: { kind: 'unknown' } };
    const ref = row.record.ref;
    const part = row.record.parts[index]!;
    if (part.outcome !== null) return { result: { kind: 'duplicate', ref } };
    const { state, reason, description } = receipt.outcome;
    const record = recordFields(row.record);
    record.parts = withPart(row.record.parts, index, {
      index: part.index,
      carrierId: part.carrierId,
      outcome: sharedOutcome(state, reason, description),
      submittedAt: part.submittedAt ?? null,
      endedAt: receipt.now,
    });
    if (hasEnded(row)) return { result: { kind: 'late', ref }, row: nextRow(row, { record }) };
    const outcomes = new Array<Outcome | null>(record.parts.length);
    for (let i = 0; i < outcomes.length; i++) outcomes[i] = record.parts[i]!.outcome;
    const folded = foldParts(outcomes);
    if (folded === null) {
      record.updatedAt = receipt.now;
      if (!reportsPerPart(record)) return { result: { kind: 'part', ref }, row: nextRow(row, { record }) };
      return partEnded(row, record, index, receipt);
    }
    const ending = endRow(row, folded, receipt.now, receipt.reportLease, record);
    return { result: { kind: 'terminal', ref, transition: ending.transition }, row: ending.row, refund: ending.refund };
  };
}
