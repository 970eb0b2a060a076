/**
 * The tables behind the bundled key verifier and profile resolver (`staticKeys`,
 * `staticProfiles`), noted when they are made, so that the owner of a short code can be
 * found without the host saying it (inbound/owners.ts). Kept apart so that those factories
 * and the owner lookup do not import each other.
 */
import { OptionError } from '../errors.js';
import { describeType } from '../util/adapter-check.js';
import type { Principal } from './principal.js';

/** A profile as the owner lookup reads it. */
export interface OwnedProfile {
  /** The profile code. */
  code: string;
  /** Its sender addresses (short codes), if listed. */
  senders?: readonly string[];
  /** The principal ids that own it; the first owns its MO messages. */
  owners: readonly string[];
}

/** The principals of the `staticKeys` verifiers made in this process, by id. */
const keyTables = new WeakMap<object, ReadonlyMap<string, Principal>>();

/** The profiles of the `staticProfiles` resolvers made in this process, in table order. */
const profileTables = new WeakMap<object, readonly OwnedProfile[]>();

/** Notes the principals behind a `staticKeys` verifier. */
export function rememberKeyTable(verifier: object, principals: ReadonlyMap<string, Principal>): void {
  keyTables.set(verifier, principals);
}

/** Notes the profiles behind a `staticProfiles` resolver. */
export function rememberProfileTable(resolver: object, profiles: readonly OwnedProfile[]): void {
  profileTables.set(resolver, profiles);
}

/** The principals behind a `staticKeys` verifier, if it is one. */
export function keyTableOf(verifier: object): ReadonlyMap<string, Principal> | undefined {
  return keyTables.get(verifier);
}

/** The profiles behind a `staticProfiles` resolver, if it is one. */
export function profileTableOf(resolver: object): readonly OwnedProfile[] | undefined {
  return profileTables.get(resolver);
}

/**
 * Checks an `inboundUrl` (or another webhook URL, `field`) of a table entry: an absolute
 * `http` or `https` URL without credentials (whether its address is allowed is decided at
 * send time, as for reports).
 */
export function assertInboundUrl(where: string, url: unknown, field = 'inboundUrl'): void {
  if (typeof url !== 'string') throw new OptionError(`${where}: ${field} must be a URL string, got ${describeType(url)}`);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new OptionError(`${where}: ${field} must be an absolute http or https URL, got ${JSON.stringify(url)}`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new OptionError(`${where}: ${field} must be an http or https URL, got ${JSON.stringify(url)}`);
  }
  if (parsed.username !== '' || parsed.password !== '') throw new OptionError(`${where}: ${field} must not carry credentials`);
}
