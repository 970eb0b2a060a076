/**
 * The router's key options, `verifyKey` and `resolveProfile`: checked once at construction
 * (a bundled factory passed uncalled is a function too, and would fail every request), with
 * the default profile resolver.
 */
import { OptionError } from '../errors.js';
import { describeType, optionalAdapter } from '../util/adapter-check.js';
import type { KeyVerifier } from './principal.js';
import { principalProfiles, staticProfiles, type ProfileResolver } from './profiles.js';
import { staticKeys } from './static-keys.js';

/** The default of `resolveProfile`: a principal's `profiles` list. */
export const DEFAULT_PROFILE_RESOLVER: ProfileResolver = principalProfiles;

/** Checks the required `verifyKey` option: a key verifier, not the `staticKeys` factory itself. */
export function resolveKeyVerifier(verifyKey: KeyVerifier): KeyVerifier {
  if (typeof verifyKey !== 'function') {
    const got = verifyKey === undefined ? '' : `, got ${describeType(verifyKey)}`;
    throw new OptionError(`createSmsRouter: \`verifyKey\` is required (a function, e.g. staticKeys([...]))${got}`, 'INVALID_ADAPTER');
  }
  // The factories are functions too, so they would pass the check above and then fail
  // every request (called with the API key instead of their table).
  if ((verifyKey as unknown) === staticKeys) {
    throw new OptionError('createSmsRouter: `verifyKey` is the factory staticKeys itself: did you mean staticKeys([...])?', 'INVALID_ADAPTER');
  }
  return verifyKey;
}

/** Checks the `resolveProfile` option and fills its default ({@link DEFAULT_PROFILE_RESOLVER}). */
export function resolveProfileResolver(given: ProfileResolver | undefined): ProfileResolver {
  const resolveProfile = optionalAdapter('resolveProfile', given, "the principal's `profiles` list", (where, value) => {
    if (typeof value !== 'function') {
      throw new OptionError(`${where} must be a function (code, principal) => Profile | null, got ${describeType(value)}`, 'INVALID_ADAPTER');
    }
    if (value === staticProfiles) throw new OptionError(`${where} is the factory staticProfiles itself: did you mean staticProfiles([...])?`, 'INVALID_ADAPTER');
  });
  return resolveProfile ?? DEFAULT_PROFILE_RESOLVER;
}
