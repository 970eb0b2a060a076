/**
 * The `parts` of a message's public view (`statusView`): each SMS part as the carrier knows
 * it, for a caller asking why a long message ended as it did.
 */
import { isTerminal, type MessageState } from '../lifecycle/states.js';
import type { MessageRecord, PartRecord } from '../storage/contract.js';

/** One part of a message as its sender sees it. */
export interface PartView {
  /** 0-based part index. */
  index: number;
  /** The carrier's id for the part (its latest submission), or `null` before it went. */
  carrier_id: string | null;
  /** The part's own state: its receipt's, or the message's while none came. */
  status: MessageState;
  /** Why the part did not end `delivered` (a `status_reason`), else `null`. */
  error_code: string | null;
  /** When the carrier accepted it, RFC 3339; `null` before then or when not kept. */
  submitted_at: string | null;
  /** When it reached its final state, RFC 3339; `null` while pending. */
  final_at: string | null;
}

const iso = (ms: number | null | undefined): string | null => (ms === null || ms === undefined ? null : new Date(ms).toISOString());

/**
 * `part` of `message` as its sender sees it. A part without a receipt of its own has the
 * message's state: `submitted` once it went while the message waits, and the message's
 * terminal state (with its reason and time) when the message ended without it (cancelled,
 * expired, failed).
 */
export function partView(message: MessageRecord, part: PartRecord): PartView {
  const ended = isTerminal(message.state);
  const own = part.outcome;
  let status: MessageState;
  let errorCode: string | null;
  let finalAt: string | null;
  if (own !== null) {
    status = own.state;
    errorCode = own.state === 'delivered' ? null : own.reason;
    finalAt = iso(part.endedAt);
  } else if (ended) {
    status = message.state;
    errorCode = message.state === 'delivered' ? null : message.statusReason;
    finalAt = iso(message.updatedAt);
  } else {
    status = part.carrierId !== null ? 'submitted' : message.state;
    errorCode = null;
    finalAt = null;
  }
  return { index: part.index, carrier_id: part.carrierId, status, error_code: errorCode, submitted_at: iso(part.submittedAt), final_at: finalAt };
}

/** Every part of `message`, in index order ({@link partView}). */
export function partsView(message: MessageRecord): PartView[] {
  return message.parts.map((part) => partView(message, part));
}
