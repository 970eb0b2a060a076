/**
 * The carrier's side of a message's life, as rules on a row: recording a part's submission
 * (`Storage.recordSubmission`) and applying a part's receipt (`Storage.applyReceipt`),
 * each deciding the row's next version for the compare-and-set loop (compare-and-set.ts).
 *
 * @module
 */
import { foldParts } from '../lifecycle/states.js';
import type { PartReceipt, PartRecord, ReceiptResult, SubmissionResult } from '../storage/contract.js';
import type { MessageRow } from '../storage/record-store.js';
import type { Decision } from './compare-and-set.js';
import { copyRecord } from './copy-record.js';
import { endRow, hasEnded, nextRow } from './rows.js';

/** `parts` with part `index` replaced by `part`. */
function withPart(parts: readonly PartRecord[], index: number, part: PartRecord): PartRecord[] {
  const next = parts.slice();
  next[index] = part;
  return next;
}

/**
 * Records that part `index` went to the carrier under `carrierId` at `now`: the carrier id
 * is kept whatever the state (a receipt for it is then `late`, not `unknown`), the one it
 * replaces stays findable; a queued message moves to `submitted` with its last part, its
 * lease ended.
 */
export function submissionRule(ref: string, index: number, carrierId: string, now: number) {
  return (row: MessageRow | null): Decision<SubmissionResult> => {
    const stale: SubmissionResult = { kind: 'stale', ref };
    const part = row?.record.parts[index];
    if (row === null || part === undefined) return { result: stale };
    const record = row.record;
    const queued = record.state === 'queued';
    if (part.carrierId === carrierId && !queued) return { result: stale };
    const parts = part.carrierId === carrierId ? record.parts : withPart(record.parts, index, { index: part.index, carrierId, outcome: part.outcome });
    const book = part.carrierId === null || part.carrierId === carrierId ? row.book : { ...row.book, replacedCarrierIds: [...row.book.replacedCarrierIds, { carrierId: part.carrierId, index }] };
    const carrierIds = row.carrierIds.includes(carrierId) ? row.carrierIds : [...row.carrierIds, carrierId];
    if (!queued) return { result: stale, row: nextRow(row, { record: { ...record, parts }, book, carrierIds }) };
    if (parts.some((p) => p.carrierId === null)) {
      return { result: { kind: 'part', ref }, row: nextRow(row, { record: { ...record, parts, updatedAt: now }, book, carrierIds }) };
    }
    const submitted = { ...record, parts, state: 'submitted' as const, updatedAt: now };
    return {
      result: { kind: 'submitted', transition: { message: copyRecord(submitted), previousState: 'queued' } },
      row: nextRow(row, { record: submitted, book, carrierIds, queue: null, leaseOwner: null, leaseUntil: null }),
    };
  };
}

/** The index of the part of `row` that had `carrierId` (its latest or a replaced one), or -1. */
function partIndexOf(row: MessageRow, carrierId: string): number {
  const index = row.record.parts.findIndex((part) => part.carrierId === carrierId);
  if (index >= 0) return index;
  return row.book.replacedCarrierIds.find((replaced) => replaced.carrierId === carrierId)?.index ?? -1;
}

/**
 * Applies `receipt` to the part of `row` named by the first of its carrier-id spellings the
 * row has: `duplicate` when the part has its outcome already; else the part gets it, and
 * the message is `late` (already ended: nothing else changes), `part` (others still wait)
 * or `terminal` (every part has one: `foldParts`, with the report born leased under the
 * receipt's `reportLease` if it has one).
 */
export function receiptRule(receipt: PartReceipt) {
  return (row: MessageRow | null): Decision<ReceiptResult> => {
    const carrierId = row === null ? undefined : receipt.carrierIds.find((id) => row.carrierIds.includes(id));
    const index = row === null || carrierId === undefined ? -1 : partIndexOf(row, carrierId);
    if (row === null || index < 0) return { result: { kind: 'unknown' } };
    const ref = row.record.ref;
    const part = row.record.parts[index]!;
    if (part.outcome !== null) return { result: { kind: 'duplicate', ref } };
    const { state, reason, description } = receipt.outcome;
    const parts = withPart(row.record.parts, index, { index: part.index, carrierId: part.carrierId, outcome: { state, reason, description } });
    if (hasEnded(row)) return { result: { kind: 'late', ref }, row: nextRow(row, { record: { ...row.record, parts } }) };
    const folded = foldParts(parts.map((p) => p.outcome));
    if (folded === null) return { result: { kind: 'part', ref }, row: nextRow(row, { record: { ...row.record, parts, updatedAt: receipt.now } }) };
    const ending = endRow(row, folded, receipt.now, receipt.reportLease, { ...row.record, parts });
    return { result: { kind: 'terminal', ref, transition: ending.transition }, row: ending.row, refund: ending.refund };
  };
}
