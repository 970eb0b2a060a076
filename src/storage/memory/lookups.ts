/**
 * The memory record store's lookups by a key other than `ref`: by carrier id
 * ({@link CarrierIdIndex}) and by a principal's external id ({@link ExternalIdIndex}).
 *
 * @module
 */
import type { MessageRow } from '../record-store.js';
import { newestLast, type Slot } from './slot.js';
import type { SlotIndex } from './sorted-slots.js';

/** Every carrier id of every row, to its slot. */
export class CarrierIdIndex {
  readonly #slots = new Map<string, Slot>();

  /** Finds `slot` by every id of `ids`. */
  add(slot: Slot, ids: readonly string[]): void {
    for (const id of ids) this.#slots.set(id, slot);
  }

  /** Finds `slot` by the ids of `after` rather than by those its row has. */
  update(slot: Slot, after: readonly string[]): void {
    // Most writes keep the row's one id, or the array the slot already keeps.
    if (slot.carrierIds === after || (after.length === 1 && slot.carrierIds === after[0])) return;
    const before = slot.carrierIdList();
    for (const id of before) if (!after.includes(id) && this.#slots.get(id) === slot) this.#slots.delete(id);
    // Ids the row had already point at it (unless a later row took them); only the new ones need setting.
    for (const id of after) if (!before.includes(id)) this.#slots.set(id, slot);
  }

  /** Stops finding `slot` by the ids its row has. */
  remove(slot: Slot): void {
    for (const id of slot.carrierIdList()) if (this.#slots.get(id) === slot) this.#slots.delete(id);
  }

  /** The slot of the first of `ids` that any row has, or `undefined`. */
  find(ids: readonly string[]): Slot | undefined {
    for (const id of ids) if (this.#slots.has(id)) return this.#slots.get(id);
    return undefined;
  }
}

/**
 * The rows by principal and external id. Most external ids name one row, so a key holds
 * the slot itself, and a set only once a second row shares it.
 */
export class ExternalIdIndex implements SlotIndex {
  /** principalId -> externalId -> its slot or slots; two maps, so no pair of texts needs a separator. */
  readonly #byPrincipal = new Map<string, Map<string, Slot | Set<Slot>>>();

  moves(slot: Slot, after: MessageRow): boolean {
    return slot.record.principalId !== after.record.principalId || slot.record.externalId !== after.record.externalId;
  }

  add(slot: Slot): void {
    const { principalId, externalId } = slot.record;
    let ofPrincipal = this.#byPrincipal.get(principalId);
    if (ofPrincipal === undefined) this.#byPrincipal.set(principalId, (ofPrincipal = new Map()));
    const held = ofPrincipal.get(externalId);
    if (held === undefined) ofPrincipal.set(externalId, slot);
    else if (held instanceof Set) held.add(slot);
    else ofPrincipal.set(externalId, new Set([held, slot]));
  }

  remove(slot: Slot): void {
    const { principalId, externalId } = slot.record;
    const ofPrincipal = this.#byPrincipal.get(principalId);
    const held = ofPrincipal?.get(externalId);
    if (ofPrincipal === undefined || held === undefined) return;
    if (held instanceof Set) {
      held.delete(slot);
      if (held.size === 0) ofPrincipal.delete(externalId);
    } else if (held === slot) ofPrincipal.delete(externalId);
    if (ofPrincipal.size === 0) this.#byPrincipal.delete(principalId);
  }

  /** The principal's slots with `externalId`, newest first (an external id names few messages). */
  slots(principalId: string, externalId: string): Slot[] {
    const held = this.#byPrincipal.get(principalId)?.get(externalId);
    if (held === undefined) return [];
    return held instanceof Set ? [...held].sort((a, b) => newestLast(b, a)) : [held];
  }
}
