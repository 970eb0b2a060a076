/**
 * How the SQL adapters keep a message's parts: as one JSON array in the message's own row,
 * one element per part in index order, `[carrierId]` until its receipt, then
 * `[carrierId, state, reason, description]`. SQLite keeps it as text (schema version 3),
 * PostgreSQL as `jsonb` (schema version 4), the same shape in both.
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

/** One part as stored: `[carrierId]`, or `[carrierId, state, reason, description]` once reported. */
export type StoredPart = [string | null] | [string | null, TerminalState, StatusReason, string];

/** The parts of a stored array, in index order, as new objects the caller may change. */
export function partsFromStored(stored: readonly StoredPart[]): PartRecord[] {
  return stored.map(
    (part, index): PartRecord => ({
      index,
      carrierId: part[0],
      outcome: part.length === 1 ? null : { state: part[1], reason: part[2], description: part[3] },
    }),
  );
}

/** The stored JSON text of `parts` (which are in index order); {@link partsFromStored} reads it back. */
export function storedPartsJson(parts: readonly PartRecord[]): string {
  return JSON.stringify(
    parts.map(({ carrierId, outcome }): StoredPart =>
      outcome === null ? [carrierId] : [carrierId, outcome.state, outcome.reason, outcome.description],
    ),
  );
}

/** `unsubmittedPartsJson(n)` for each `n` asked for so far: the same few counts come again and again. */
const unsubmittedByCount: string[] = [];

/** The stored JSON text of a new message of `smsCount` parts: none submitted, none reported. */
export function unsubmittedPartsJson(smsCount: number): string {
  return (unsubmittedByCount[smsCount] ??= storedPartsJson(
    Array.from({ length: smsCount }, (_, index): PartRecord => ({ index, carrierId: null, outcome: null })),
  ));
}
