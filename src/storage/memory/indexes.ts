/**
 * The memory storage's lookups besides its map of messages by ref: messages by the
 * principal's external id ({@link ExternalIdIndex}, for status queries) and parts by carrier
 * id ({@link CarrierIdIndex}, for receipts). Both are shaped for the usual case (one message
 * per external id, one part per message) so that it costs no object of its own, because an
 * index entry lives as long as its message is retained.
 *
 * @module
 */
import type { StoredMessage } from './records.js';

/**
 * principalId -> externalId -> refs. Most external ids name one message, so one ref is
 * kept as the string itself; a Set per message would cost about 150 bytes each.
 */
export class ExternalIdIndex {
  private readonly byPrincipal = new Map<string, Map<string, string | Set<string>>>();

  /** Adds message `ref` under its principal's `externalId`. */
  add(principalId: string, externalId: string, ref: string): void {
    let ofPrincipal = this.byPrincipal.get(principalId);
    if (ofPrincipal === undefined) this.byPrincipal.set(principalId, (ofPrincipal = new Map()));
    const refsOfId = ofPrincipal.get(externalId);
    if (refsOfId === undefined) ofPrincipal.set(externalId, ref);
    else if (typeof refsOfId === 'string') ofPrincipal.set(externalId, new Set([refsOfId, ref]));
    else refsOfId.add(ref);
  }

  /** The refs of the principal's messages with `externalId`, in no order; `undefined` if none. */
  refs(principalId: string, externalId: string): string[] | undefined {
    const refs = this.byPrincipal.get(principalId)?.get(externalId);
    if (refs === undefined) return undefined;
    return typeof refs === 'string' ? [refs] : [...refs];
  }

  /** Removes message `ref` from under its principal's `externalId`, and what it leaves empty. */
  remove(principalId: string, externalId: string, ref: string): void {
    const ofPrincipal = this.byPrincipal.get(principalId);
    const refs = ofPrincipal?.get(externalId);
    if (refs === ref) ofPrincipal!.delete(externalId);
    else if (typeof refs === 'object') {
      refs.delete(ref);
      if (refs.size === 0) ofPrincipal!.delete(externalId);
    }
    if (ofPrincipal?.size === 0) this.byPrincipal.delete(principalId);
  }
}

/**
 * Where a carrier id points when it is not a message's first part. The carrier-id index
 * holds a first part's message itself (most messages have one part), so the usual case
 * keeps no address object.
 */
export class LaterPart {
  constructor(
    readonly message: StoredMessage,
    readonly index: number,
  ) {}
}

/** carrierId -> the part it names: its message when it is part 0, else a {@link LaterPart}. */
export class CarrierIdIndex {
  private readonly parts = new Map<string, StoredMessage | LaterPart>();

  /** Points `carrierId` at part `index` of `message`, replacing where it pointed before. */
  set(carrierId: string, message: StoredMessage, index: number): void {
    this.parts.set(carrierId, index === 0 ? message : new LaterPart(message, index));
  }

  /** The part the first of `carrierIds` that is indexed names, or `undefined`. */
  find(carrierIds: readonly string[]): StoredMessage | LaterPart | undefined {
    let found: StoredMessage | LaterPart | undefined;
    for (const carrierId of carrierIds) {
      found = this.parts.get(carrierId);
      if (found !== undefined) break;
    }
    return found;
  }

  /** Drops `carrierId` if it still names a part of `message`. */
  drop(carrierId: string, message: StoredMessage): void {
    // A carrier may reuse an id for a later message; that entry is not ours to drop.
    const found = this.parts.get(carrierId);
    if (found === message || (found instanceof LaterPart && found.message === message)) this.parts.delete(carrierId);
  }
}
