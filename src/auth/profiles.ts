/**
 * Sender profiles: which `profile_code` values a principal may send under, and the sender
 * address each one gives the carrier.
 */
import { assertStringList, describeType } from '../util/adapter-check.js';
import { assertKnownKeys } from '../util/known-keys.js';
import type { Principal } from './principal.js';
import type { Priority } from '../storage/contract.js';
import { OptionError } from '../errors.js';
import { assertInboundUrl, rememberProfileTable } from './owner-tables.js';
import { assertCountry, assertNumberPolicy, type NumberPolicy } from '../numbers/policy.js';
import { assertQuietHours, assertTimeZone, type QuietHours } from '../numbers/quiet-hours.js';
import { assertRetainText } from './retain-text-option.js';
import type { RetainText } from '../lifecycle/retain-text.js';

/** A sender profile: an SMS product configuration. */
export interface Profile {
  /** The `profile_code` callers send. */
  code: string;
  /**
   * Sender addresses (short codes or alphanumeric ids) this profile may send from. The
   * first is the default; the premium form's `from` must be one of them. Default: the code.
   */
  senders?: readonly string[];
  /**
   * Its messages' class: `transactional` ones (one-time passwords, alerts) are claimed before
   * any `bulk` one (campaigns). Default `bulk`.
   */
  priority?: Priority;
  /**
   * Where the mobile-originated messages sent to this profile's code or senders are forwarded
   * (docs/inbound.md); it wins over the principal's `inboundUrl`. Default: the principal's,
   * else none (stored, not forwarded).
   */
  inboundUrl?: string;
  /**
   * Whether a quick-send message of this profile to a number opted out of its sender ends
   * `rejected` (`opted_out`) instead of going out, checked when it is accepted. Premium
   * messages always honour opt-outs. Default `false`.
   */
  honourOptOuts?: boolean;
  /**
   * Smart encoding: in a text that is UCS-2 only for characters with a GSM-7 look-alike
   * (curly quotes, dashes, the ellipsis, Unicode spaces), they are replaced, so it goes out
   * as GSM-7 at no more units (`smartEncode`); `sms_count` and the stored text are what is
   * sent. It changes the customer's text, so it is off by default.
   */
  smartEncoding?: boolean;
  /**
   * The validity period, seconds (30 to 172,800), of its messages sent without
   * `validity_period`: one not submitted within it (from its `send_at`, or its acceptance) is
   * never sent and ends `expired`. Default none: a message waits as long as the queue makes it.
   */
  validityPeriod?: number;
  /**
   * Which recipients it accepts (docs/numbers.md): `mobile` (a valid number of a type that
   * can take SMS), `valid`, `possible` or `digits` (8 to 15 digits). Default: the
   * principal's `numbers`, else `mobile`.
   */
  numbers?: NumberPolicy;
  /**
   * ISO 3166 alpha-2 country (`KE`) its callers' national numbers belong to: then
   * `0712345678` and `+254 712 345 678` are accepted too, stored and sent as
   * `254712345678`. Default none: only international digits without `+` are accepted.
   */
  defaultCountry?: string;
  /**
   * Local hours its `bulk` messages are not sent in (`{ from: '21:00', to: '08:00' }`): one
   * due inside them in its recipient's zone is stored `scheduled` until they end. The zone is
   * the recipient's country's where the country keeps one clock, else {@link timeZone}.
   * Transactional messages are never held. Default none (docs/numbers.md#quiet-hours).
   */
  quietHours?: QuietHours;
  /**
   * The IANA time zone (`America/New_York`) of its recipients in countries of several zones
   * (the US, Brazil), for `quietHours`. Without it, such a recipient is not held.
   */
  timeZone?: string;
  /**
   * How many delivery reports a message of several parts gets: `message`, one when the
   * message ends (the default), or `part`, one for each part when it ends, with the part's
   * index and carrier id (docs/delivery-reports.md#one-report-per-part). Kept with each
   * message when it is accepted.
   */
  reportPer?: 'message' | 'part';
  /**
   * How long its messages' texts are kept: `always` (the default), `until-final` (redacted
   * when the message ends) or `days:N` (N days after acceptance); over its principal's
   * `retainText`. A redacted text is `[redacted]` with its SHA-256 kept (docs/retain-text.md).
   */
  retainText?: RetainText;
  /**
   * How its messages' delivery reports reach the caller: `push` (the default: POSTed to the
   * request's `dlr_callback_url`, and readable from `GET {base}/reports` too) or `pull` (never
   * POSTed, a `dlr_callback_url` ignored: read from `GET {base}/reports` only,
   * docs/reports-pull.md). Its principal's `reportDelivery: 'pull'` does the same for all of
   * its profiles.
   */
  reportDelivery?: 'push' | 'pull';
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

const PROFILE_FIELDS = ['code', 'senders', 'owners', 'priority', 'inboundUrl', 'honourOptOuts', 'smartEncoding', 'validityPeriod', 'numbers', 'defaultCountry', 'quietHours', 'timeZone', 'reportPer', 'retainText', 'reportDelivery'] as const;

/**
 * A resolver over a fixed table of profiles, each listing its owners.
 *
 * The table is checked here, once: a profile listed twice would silently lose one of its
 * owner lists, and an `owners` string instead of an array would match every principal whose
 * id is a substring of it (`'acme'.includes('a')`).
 *
 * @example staticProfiles([{ code: '12345', senders: ['22021'], owners: ['acme'] }])
 * @throws TypeError at construction, naming the entry by its index (`staticProfiles: entry 1:
 *   code is required`): for a missing or empty `code` or one listed twice, `owners` or
 *   `senders` that are not arrays of non-empty strings (`senders` may be left out, not empty),
 *   or an unknown field.
 */
export function staticProfiles(profiles: readonly StaticProfile[]): ProfileResolver {
  if (!Array.isArray(profiles)) throw new OptionError(`staticProfiles: expects an array of profiles, got ${describeType(profiles)}`);
  const byCode = new Map<string, StaticProfile>();
  const codeOwner = new Map<string, number>();
  profiles.forEach((profile: unknown, index) => {
    const where = `staticProfiles: entry ${index}`;
    if (typeof profile !== 'object' || profile === null || Array.isArray(profile)) {
      throw new OptionError(`${where}: must be an object { code, owners, senders? }, got ${describeType(profile)}`);
    }
    assertKnownKeys(where, profile, PROFILE_FIELDS);
    const { code, owners, senders, priority } = profile as StaticProfile;
    if (code === undefined || code === '') throw new OptionError(`${where}: code is required (the profile_code callers send)`);
    if (typeof code !== 'string') throw new OptionError(`${where}: code must be a non-empty string, got ${describeType(code)}`);
    const named = `${where} ("${code}")`;
    const twin = codeOwner.get(code);
    if (twin !== undefined) throw new OptionError(`${named}: code "${code}" is already used by entry ${twin}; list each profile once, with all its owners`);
    if (owners === undefined) throw new OptionError(`${named}: owners is required (the principal ids that may use it)`);
    assertStringList(`${named}: owners`, owners);
    if (senders !== undefined) {
      assertStringList(`${named}: senders`, senders);
      if (senders.length === 0) throw new OptionError(`${named}: senders is empty; leave it out to send from the code`);
    }
    if (priority !== undefined && priority !== 'transactional' && priority !== 'bulk') {
      throw new OptionError(`${named}: priority must be 'transactional' or 'bulk', got ${describeType(priority)}`);
    }
    const { reportPer } = profile as StaticProfile;
    if (reportPer !== undefined && reportPer !== 'message' && reportPer !== 'part') {
      throw new OptionError(`${named}: reportPer must be 'message' or 'part', got ${describeType(reportPer)}`);
    }
    assertRetainText(named, (profile as StaticProfile).retainText);
    const { reportDelivery } = profile as StaticProfile;
    if (reportDelivery !== undefined && reportDelivery !== 'push' && reportDelivery !== 'pull') {
      throw new OptionError(`${named}: reportDelivery must be 'push' or 'pull', got ${describeType(reportDelivery)}`);
    }
    const { smartEncoding } = profile as StaticProfile;
    if (smartEncoding !== undefined && typeof smartEncoding !== 'boolean') {
      throw new OptionError(`${named}: smartEncoding must be true or false, got ${describeType(smartEncoding)}`);
    }
    const { validityPeriod } = profile as StaticProfile;
    if (validityPeriod !== undefined && !(Number.isInteger(validityPeriod) && validityPeriod >= 30 && validityPeriod <= 172_800)) {
      throw new OptionError(`${named}: validityPeriod must be whole seconds from 30 to 172800, got ${describeType(validityPeriod)}`);
    }
    const { inboundUrl, honourOptOuts } = profile as StaticProfile;
    if (inboundUrl !== undefined) assertInboundUrl(named, inboundUrl);
    if (honourOptOuts !== undefined && typeof honourOptOuts !== 'boolean') {
      throw new OptionError(`${named}: honourOptOuts must be true or false, got ${describeType(honourOptOuts)}`);
    }
    const { numbers, defaultCountry } = profile as StaticProfile;
    if (numbers !== undefined) assertNumberPolicy(named, numbers);
    if (defaultCountry !== undefined) assertCountry(named, defaultCountry);
    const { quietHours, timeZone } = profile as StaticProfile;
    if (quietHours !== undefined) assertQuietHours(named, quietHours);
    if (timeZone !== undefined) assertTimeZone(named, timeZone);
    codeOwner.set(code, index);
    byCode.set(code, profile as StaticProfile);
  });
  const resolver: ProfileResolver = (code, principal) => {
    const profile = byCode.get(code);
    return profile && profile.owners.includes(principal.id) ? profile : null;
  };
  // The owner of a short code an MO message was sent to is found in this table.
  rememberProfileTable(resolver, [...byCode.values()]);
  return resolver;
}


/** The default sender of a profile: its first sender, else its code. */
export function defaultSender(profile: Profile): string {
  return profile.senders?.[0] ?? profile.code;
}
