/**
 * Sender profiles: which `profile_code` values a principal may send under, and the sender
 * address each one gives the carrier.
 */
import type { Principal } from './principal.js';

/** A sender profile: an SMS product configuration. */
export interface Profile {
  /** The `profile_code` callers send. */
  code: string;
  /**
   * Sender addresses (short codes or alphanumeric ids) this profile may send from. The
   * first is the default; the premium form's `from` must be one of them. Default: the code.
   */
  senders?: readonly string[];
}

/**
 * Finds the profile `code` for `principal`, or `null` when it does not exist or is not the
 * principal's own (both answer 422 "Invalid Profile Code", so a caller cannot probe which
 * codes exist).
 */
export type ProfileResolver = (
  code: string,
  principal: Principal,
) => Promise<Profile | null> | Profile | null;

/**
 * The default resolver: a principal may use exactly the codes in its `profiles` list,
 * each sending from its own code.
 */
export const principalProfiles: ProfileResolver = (code, principal) =>
  principal.profiles?.includes(code) ? { code } : null;

/** One profile of {@link staticProfiles}, with the principals that own it. */
export interface StaticProfile extends Profile {
  /** Principal ids that may use it. */
  owners: readonly string[];
}

/**
 * A resolver over a fixed table of profiles, each listing its owners.
 *
 * @example staticProfiles([{ code: '12345', senders: ['22021'], owners: ['acme'] }])
 */
export function staticProfiles(profiles: readonly StaticProfile[]): ProfileResolver {
  const byCode = new Map(profiles.map((p) => [p.code, p] as const));
  return (code, principal) => {
    const profile = byCode.get(code);
    return profile && profile.owners.includes(principal.id) ? profile : null;
  };
}

/** The default sender of a profile: its first sender, else its code. */
export function defaultSender(profile: Profile): string {
  return profile.senders?.[0] ?? profile.code;
}
