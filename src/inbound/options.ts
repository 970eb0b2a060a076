/**
 * The premium MO flow's options (`inbound`): who owns a short code, the stop and start
 * keywords, and the confirmation replies; their defaults, and their resolution into a
 * complete config, checked once at construction.
 */
import { tableOwners, type InboundOwnerResolver } from './owners.js';
import type { KeyVerifier } from '../auth/principal.js';
import type { ProfileResolver } from '../auth/profiles.js';
import { OptionError } from '../errors.js';
import { assertStringList, describeType } from '../util/adapter-check.js';
import { assertKnownKeys } from '../util/known-keys.js';
import { keywordForm } from './keywords.js';

/** The default stop keywords. */
export const DEFAULT_STOP_KEYWORDS: readonly string[] = ['STOP', 'STOP ALL', 'UNSUBSCRIBE', 'CANCEL', 'END', 'QUIT'];

/** The default start keywords. */
export const DEFAULT_START_KEYWORDS: readonly string[] = ['START', 'SUBSCRIBE', 'YES'];

/** The confirmation replies sent to a subscriber who sent a keyword. */
export interface OptOutConfirmation {
  /** The reply to a stop keyword, e.g. `You are unsubscribed. Reply START to subscribe again.` Default: none. */
  stop?: string;
  /** The reply to a start keyword. Default: none. */
  start?: string;
}

/** How mobile-originated (MO) messages are forwarded and read for opt-outs. Every field is optional. */
export interface InboundOptions {
  /**
   * Finds the owner (principal and profile) of the short code an MO message was sent to; it
   * is forwarded to the profile's `inboundUrl`, else the principal's. Default: looked up in
   * the `staticProfiles` / `staticKeys` tables the router was given (a profile's senders and
   * code; a principal's `profiles`), else none: MO messages are stored, not forwarded.
   */
  resolveOwner?: InboundOwnerResolver;
  /**
   * Texts that opt the sender out of the short code, matched against the whole text, case
   * and surrounding space ignored. Default `STOP`, `STOP ALL`, `UNSUBSCRIBE`, `CANCEL`,
   * `END`, `QUIT`; `[]` for none.
   */
  stopKeywords?: readonly string[];
  /** Texts that opt the sender back in, matched alike. Default `START`, `SUBSCRIBE`, `YES`; `[]` for none. */
  startKeywords?: readonly string[];
  /**
   * The replies sent from the short code to a subscriber who sent a keyword (an MT message,
   * never itself blocked by the opt-out it confirms), or `false`. Default `false`: none.
   */
  confirmation?: OptOutConfirmation | false;
}

/** {@link InboundOptions} resolved. Internal. */
export interface InboundConfig {
  /** The owner lookup, or `null` when none is known (MO messages are then stored, not forwarded). */
  resolveOwner: InboundOwnerResolver | null;
  /** The stop keywords, as given. */
  stopKeywords: readonly string[];
  /** The start keywords, as given. */
  startKeywords: readonly string[];
  /** The confirmation replies; `null`: none. */
  confirmation: { stop: string | null; start: string | null };
}

const KEYS = ['resolveOwner', 'stopKeywords', 'startKeywords', 'confirmation'] as const satisfies readonly (keyof InboundOptions)[];

/** Checks the `inbound` option and fills its defaults. */
export function resolveInboundOptions(given: InboundOptions | undefined, verifyKey: KeyVerifier, resolveProfile: ProfileResolver): InboundConfig {
  const options = given ?? {};
  if (typeof options !== 'object' || options === null) throw new OptionError(`inbound must be an object, got ${describeType(options)}`);
  assertKnownKeys('inbound', options, KEYS);
  const { resolveOwner, confirmation } = options;
  if (resolveOwner !== undefined && typeof resolveOwner !== 'function') {
    throw new OptionError(`inbound.resolveOwner must be a function (to) => { principal, profile } | null, got ${describeType(resolveOwner)}`);
  }
  const stopKeywords = options.stopKeywords ?? DEFAULT_STOP_KEYWORDS;
  const startKeywords = options.startKeywords ?? DEFAULT_START_KEYWORDS;
  assertStringList('inbound.stopKeywords', stopKeywords);
  assertStringList('inbound.startKeywords', startKeywords);
  const stops = new Set(stopKeywords.map(keywordForm));
  const both = startKeywords.find((keyword) => stops.has(keywordForm(keyword)));
  if (both !== undefined) throw new OptionError(`inbound: "${both}" is both a stop and a start keyword`);
  let replies = { stop: null as string | null, start: null as string | null };
  if (confirmation !== undefined && confirmation !== false) {
    if (typeof confirmation !== 'object' || confirmation === null) {
      throw new OptionError(`inbound.confirmation must be { stop?, start? } or false, got ${describeType(confirmation)}`);
    }
    assertKnownKeys('inbound.confirmation', confirmation, ['stop', 'start']);
    for (const name of ['stop', 'start'] as const) {
      const text = confirmation[name];
      if (text !== undefined && (typeof text !== 'string' || text.trim() === '')) {
        throw new OptionError(`inbound.confirmation.${name} must be a non-empty text, got ${describeType(text)}`);
      }
    }
    replies = { stop: confirmation.stop ?? null, start: confirmation.start ?? null };
  }
  return {
    resolveOwner: resolveOwner ?? tableOwners(verifyKey, resolveProfile),
    stopKeywords,
    startKeywords,
    confirmation: replies,
  };
}
