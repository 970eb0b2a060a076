/**
 * The ledger's erase steps (`EraseStorage`, docs/erase.md): each one bounded step over a
 * record store's primitives, deciding what every erased copy keeps with the library's rules
 * (lifecycle/erase-record.ts). Messages are erased by compare-and-set writes, so a message
 * that changes meanwhile (a receipt) is decided again on its new version; a message not yet
 * sent is ended `cancelled` in the very write that erases it.
 *
 * @module
 */
import { eraseAnswerBody, eraseMessage } from '../lifecycle/erase-record.js';
import { isTerminal } from '../lifecycle/states.js';
import { CANCELLED } from '../lifecycle/timing.js';
import type { ErasedMessages, ErasedPage, EraseStorage, IdempotencyCursor } from '../storage/erase-storage.js';
import type { MessageRow, RecordStore } from '../storage/record-store.js';
import type { IdempotencyRecord, Transition } from '../storage/contract.js';
import type { Decision, RowWriter } from './compare-and-set.js';
import { recordFields } from './copy-record.js';
import { endRow, nextRow } from './rows.js';

/** What erasing one row did: its ref, and its transition when the erase ended it. */
interface RowErased {
  ref: string;
  transition?: Transition;
}

/** The rule erasing a row to `recipient` at `now` (see the module's TSDoc); `null` for a row no longer to it. */
function eraseRule(recipient: string, now: number) {
  return (row: MessageRow | null): Decision<RowErased | null> => {
    if (row === null || row.record.recipient !== recipient) return { result: null };
    const record = recordFields(row.record);
    eraseMessage(record);
    if (isTerminal(record.state) || record.state === 'submitted') {
      return { result: { ref: record.ref }, row: nextRow(row, { record }) };
    }
    // Not yet sent: ended here, as a cancel would, since nothing may be sent to an erased number.
    const ending = endRow(row, CANCELLED, now, undefined, record);
    return { result: { ref: record.ref, transition: ending.transition }, row: ending.row, refund: ending.refund };
  };
}

/** The erase steps of a ledger over `store`, offered only when the store has their primitives. */
export function eraseSteps(store: RecordStore, writer: RowWriter): EraseStorage {
  const steps: EraseStorage = {};
  const { findByRecipient, scanIdempotency, rewriteIdempotency } = store;
  if (findByRecipient !== undefined) {
    steps.eraseMessages = async (recipient, after, limit, now): Promise<ErasedMessages> => {
      const rows = await findByRecipient.call(store, recipient, after, Math.max(1, limit));
      const done = await writer.updateAll(rows, eraseRule(recipient, now));
      const erased = done.filter((item): item is RowErased => item !== null);
      return {
        erased: erased.length,
        refs: erased.map((item) => item.ref),
        transitions: erased.flatMap((item) => (item.transition === undefined ? [] : [item.transition])),
        // A short page read every principal's rows to the number: none is left.
        next: rows.length < Math.max(1, limit) ? null : rows.at(-1)!.record.principalId,
      };
    };
  }
  if (scanIdempotency !== undefined && rewriteIdempotency !== undefined) {
    steps.eraseIdempotency = async (refs, after, limit): Promise<ErasedPage<IdempotencyCursor>> => {
      const page = await scanIdempotency.call(store, after, Math.max(1, limit));
      const changed: IdempotencyRecord[] = [];
      for (const record of page) {
        const body = refs.size === 0 ? null : eraseAnswerBody(record.body, refs);
        if (body !== null) changed.push({ ...record, body });
      }
      const erased = changed.length === 0 ? 0 : await rewriteIdempotency.call(store, changed);
      const last = page.at(-1);
      return { erased, next: page.length < Math.max(1, limit) || last === undefined ? null : { principalId: last.principalId, key: last.key } };
    };
  }
  return steps;
}
