/**
 * Who owns a short code: where a mobile-originated message sent to it is forwarded. The
 * host may say it (`inbound.resolveOwner`); for the bundled tables (`staticKeys`,
 * `staticProfiles`) the router finds it itself, from the tables they were made from.
 */
import type { KeyVerifier, Principal } from './principal.js';
import { keyTableOf, profileTableOf } from './owner-tables.js';
import { principalProfiles, type Profile, type ProfileResolver } from './profiles.js';

/** The owner of a short code: a principal and its profile for that code. */
export interface InboundOwner {
  /** The customer: its `inboundUrl` (when the profile has none) and `callbackSecret` apply. */
  principal: Principal;
  /** Its profile whose code or senders include the short code: its `inboundUrl` applies first. */
  profile: Profile;
}

/**
 * Finds the owner of the short code (or number) an MO message was sent to, or `null` when
 * none (the message is then stored, not forwarded). Sync or async; called once per message.
 */
export type InboundOwnerResolver = (to: string) => Promise<InboundOwner | null> | InboundOwner | null;

/**
 * The owner resolver the router uses when the host gives none: from a `staticProfiles` table,
 * the first profile whose senders (or code) include the short code, owned by its first owner
 * (the principal of that id in a `staticKeys` table, else one with only the id); with the
 * default profile resolver and a `staticKeys` table, the first principal whose `profiles`
 * list the code. `null` when neither table is known (a host's own verifier and resolver).
 */
export function tableOwners(verifyKey: KeyVerifier, resolveProfile: ProfileResolver): InboundOwnerResolver | null {
  const principals = keyTableOf(verifyKey);
  const profiles = profileTableOf(resolveProfile) as readonly (Profile & { owners: readonly string[] })[] | undefined;
  if (profiles !== undefined) {
    return (to) => {
      const profile = profiles.find((p) => (p.senders ?? [p.code]).includes(to) || p.code === to);
      const id = profile?.owners[0];
      if (profile === undefined || id === undefined) return null;
      return { principal: principals?.get(id) ?? { id }, profile };
    };
  }
  if (resolveProfile === principalProfiles && principals !== undefined) {
    return (to) => {
      for (const principal of principals.values()) {
        if (principal.profiles?.includes(to) === true) return { principal, profile: { code: to } };
      }
      return null;
    };
  }
  return null;
}
