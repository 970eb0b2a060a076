/**
 * Who owns a short code: where a mobile-originated message sent to it is forwarded. The
 * host may say it (`inbound.resolveOwner`); for the bundled tables (`staticKeys`,
 * `staticProfiles`) the router finds it itself, from the tables they were made from. The
 * owner decides where the message's webhook goes and how it is signed.
 */
import type { KeyVerifier, Principal } from '../auth/principal.js';
import { keyTableOf, profileTableOf } from '../auth/owner-tables.js';
import { principalProfiles, type Profile, type ProfileResolver } from '../auth/profiles.js';
import { isPromiseLike } from '../util/settle.js';

/** The owner of a short code: a principal and its profile for that code. */
export interface InboundOwner {
  /** The customer: its `inboundUrl` (when the profile has none) and `callbackSecret` apply. */
  principal: Principal;
  /** Its profile whose code or senders include the short code: its `inboundUrl` applies first. */
  profile: Profile;
}

/** Where an inbound message sent to a short code goes: its owner, and the owner's inbound URL. */
export interface InboundTarget {
  /** The owning principal. */
  principalId: string;
  /** The owner's profile for the short code. */
  profileCode: string;
  /** The inbound URL (the profile's, else the principal's), or `null`: stored, not forwarded. */
  url: string | null;
  /** Signs the webhook (the principal's `callbackSecret`), or `null` for the router's `dlr.secret`. */
  secret: string | null;
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

/**
 * Where the inbound handler sends a message to short code `to`: its owner's profile's
 * `inboundUrl`, else the principal's, signed with the principal's `callbackSecret`; `null`
 * when the short code has no owner (or there is no resolver).
 */
export function ownerTargets(resolveOwner: InboundOwnerResolver | null): (to: string) => Promise<InboundTarget | null> {
  return async (to) => {
    if (resolveOwner === null) return null;
    const found = resolveOwner(to);
    const owner = isPromiseLike(found) ? await found : found;
    if (owner === null || owner === undefined) return null;
    const url = owner.profile.inboundUrl ?? owner.principal.inboundUrl ?? null;
    return { principalId: owner.principal.id, profileCode: owner.profile.code, url, secret: owner.principal.callbackSecret ?? null };
  };
}
