/**
 * What the key check reads from a principal besides its id: its permissions, its expiry, its
 * allowed addresses and its spend caps (which the send path reads from here), each read
 * from the principal's own form into one that is cheap to test on every request.
 *
 * A frozen principal (every one a `staticKeys` table returns; a host's own may be frozen too)
 * cannot change, so its guards are read once and kept; any other is read on each request,
 * since a host's verifier may update the object it caches. The address lists of those are
 * still remembered by their text, so the CIDR blocks are parsed once.
 */
import { AllowedIpsProblem, allowedIpsByText, readAllowedIps, type AddressCheck } from './allowed-ips.js';
import { ExpiresAtProblem, readExpiresAt } from './expiry.js';
import type { Principal } from './principal.js';
import { grantsOf } from './scopes.js';
import { readUnitCaps, UnitCapProblem, type UnitCaps } from './spend-caps.js';
import { describeType } from '../util/adapter-check.js';

/** A principal's guards, as the key check tests them. */
export interface KeyGuards {
  /** Its permissions, a bit set for `grants` (`scopes.ts`). */
  readonly granted: number;
  /** When its key expires, epoch ms; `null` for never. */
  readonly expiresAt: number | null;
  /** Whether a client address may use its key; `null` for any address. */
  readonly allowsAddress: AddressCheck | null;
  /** Its spend caps (`dailyUnits`, `monthlyUnits`). */
  readonly caps: UnitCaps;
}

/** A principal field that cannot be read, named in the message; the caller words the error. */
export class KeyGuardsProblem extends Error {
  override name = 'KeyGuardsProblem';
}

const kept = new WeakMap<Principal, KeyGuards>();

/**
 * The guards of `principal` (see the module comment for when they are read).
 *
 * @throws KeyGuardsProblem for a `scopes` that is not a list, an `expiresAt` that is not a
 *   time, an `allowedIps` entry that is not an address or a block, or a `dailyUnits` or
 *   `monthlyUnits` that is not a count of units.
 */
export function keyGuardsOf(principal: Principal): KeyGuards {
  const known = kept.get(principal);
  if (known !== undefined) return known;
  const guards = readGuards(principal);
  if (Object.isFrozen(principal)) kept.set(principal, guards);
  return guards;
}

function readGuards(principal: Principal): KeyGuards {
  const { scopes, expiresAt, allowedIps, dailyUnits, monthlyUnits } = principal;
  if (scopes !== undefined && !Array.isArray(scopes)) throw new KeyGuardsProblem(`scopes must be an array, got ${describeType(scopes)}`);
  try {
    return {
      granted: grantsOf(scopes),
      expiresAt: expiresAt === undefined ? null : readExpiresAt(expiresAt),
      allowsAddress: allowedIps === undefined ? null : addressCheck(allowedIps),
      caps: readUnitCaps(dailyUnits, monthlyUnits),
    };
  } catch (error) {
    if (error instanceof AllowedIpsProblem || error instanceof ExpiresAtProblem || error instanceof UnitCapProblem) throw new KeyGuardsProblem(error.message);
    throw error;
  }
}

/** The check of a list of address blocks, remembered by its text when it is a list of strings. */
function addressCheck(list: unknown): AddressCheck {
  if (Array.isArray(list) && list.every((entry) => typeof entry === 'string')) return allowedIpsByText(JSON.stringify(list));
  return readAllowedIps(list);
}
