/**
 * A principal's spend caps, `dailyUnits` and `monthlyUnits`: the SMS units its keys may have
 * stored in a day, or a month, of the router's `spendCaps.timeZone` (docs/keys.md#spend-caps).
 * Read here into the form the send path checks; counted by the storage (http/spend-caps.ts).
 */
import { describeType } from '../util/adapter-check.js';

/** A principal's caps as the send path reads them; `null` for none. */
export interface UnitCaps {
  /** SMS units per day, or `null`. */
  readonly daily: number | null;
  /** SMS units per month, or `null`. */
  readonly monthly: number | null;
}

/** A cap that cannot be read, with the reason; the caller words the error. */
export class UnitCapProblem extends Error {
  override name = 'UnitCapProblem';
}

/** No caps: the caps of a principal without either field. */
export const NO_CAPS: UnitCaps = Object.freeze({ daily: null, monthly: null });

/**
 * The caps of a principal's `dailyUnits` and `monthlyUnits`.
 *
 * @throws UnitCapProblem for a cap that is not an integer from 0 (0: nothing may be sent) up
 *   to `Number.MAX_SAFE_INTEGER`.
 */
export function readUnitCaps(dailyUnits: unknown, monthlyUnits: unknown): UnitCaps {
  if (dailyUnits === undefined && monthlyUnits === undefined) return NO_CAPS;
  return { daily: readCap('dailyUnits', dailyUnits), monthly: readCap('monthlyUnits', monthlyUnits) };
}

function readCap(name: string, value: unknown): number | null {
  if (value === undefined) return null;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    const shown = typeof value === 'number' ? String(value) : describeType(value);
    throw new UnitCapProblem(`${name} must be an integer of SMS units from 0, got ${shown}`);
  }
  return value;
}
