/**
 * `staticKeys`: a key verifier over a fixed list of keys, given in plain text or as
 * SHA-256 digests so the host need not keep the keys themselves in its configuration.
 */
import * as crypto from 'node:crypto';
import { REPORT_FORMATS } from '../dlr/payload.js';
import { signingKey } from '../dlr/sign.js';
import { assertStringList, describeType } from '../util/adapter-check.js';
import { assertKnownKeys, assertNumber, assertWeight, nearest } from '../util/known-keys.js';
import type { KeyVerifier, Principal } from './principal.js';
import { OptionError } from '../errors.js';
import { assertInboundUrl, rememberKeyTable } from './owner-tables.js';
import { assertNumberPolicy } from '../numbers/policy.js';
import { AllowedIpsProblem, readAllowedIps } from './allowed-ips.js';
import { ExpiresAtProblem, readExpiresAt, type ExpiresAt } from './expiry.js';
import { SCOPES, type Scope } from './scopes.js';
import { keyGuardsOf } from './key-guards.js';
import { readUnitCaps, UnitCapProblem } from './spend-caps.js';
import { assertRetainText } from './retain-text-option.js';

/**
 * One of a principal's `keys` in {@link staticKeys}: exactly one of `key` or `sha256`, and
 * when that key expires (the earlier of it and the principal's `expiresAt` applies).
 */
export type StaticKeyOfPrincipal = ({ key: string; sha256?: undefined } | { sha256: string; key?: undefined }) & {
  /** When this key stops working; default: the principal's `expiresAt`, else never. */
  expiresAt?: ExpiresAt;
};

/**
 * One entry of {@link staticKeys}: a principal with its key (exactly one of `key` or
 * `sha256`), or with several `keys`, as while one is rotated out for another.
 */
export type StaticKey = Principal &
  (
    | { key: string; sha256?: undefined; keys?: undefined }
    | { sha256: string; key?: undefined; keys?: undefined }
    | { keys: readonly StaticKeyOfPrincipal[]; key?: undefined; sha256?: undefined }
  );

/**
 * The SHA-256 of `text` in hex. Node's one-shot `crypto.hash` (every Node the package's
 * `engines` allows has it) skips the Hash object `createHash` makes, measurable when it runs
 * on every request.
 */
const sha256Hex = (text: string): string => crypto.hash('sha256', text, 'hex');

/** The fields an entry may have: its key (or digest) and the {@link Principal} fields. */
const ENTRY_FIELDS = [
  'key', 'sha256', 'keys', 'id', 'scopes', 'expiresAt', 'allowedIps', 'disabled', 'profiles', 'callbackSecret', 'reportFormat', 'reportDelivery',
  'inboundUrl', 'rateLimit', 'weight', 'maxQueued', 'numbers', 'dailyUnits', 'monthlyUnits', 'retainText', 'callbackFailoverUrl',
] as const;

/** The fields of one of an entry's `keys`. */
const KEY_FIELDS = ['key', 'sha256', 'expiresAt'] as const;

/**
 * A {@link KeyVerifier} over a fixed list of keys.
 *
 * Keys are looked up by their SHA-256 digest, never compared themselves: a lookup's timing
 * can reveal at most something about a digest, which tells an attacker nothing about a key
 * (finding a key for a digest is a preimage attack). So no constant-time comparison is
 * needed on top.
 *
 * Every entry is checked here, once, because a mistake in this table is otherwise silent
 * until it hurts: two entries without an `id` (or with the same one) are one principal, so
 * each key reads the other's messages; a misspelt scope or field leaves a key that cannot
 * send; a `profiles` string instead of an array matches substrings of the code. The table
 * is read once: a later change to the objects given is not seen.
 *
 * @example staticKeys([{ key: process.env.SMS_API_KEY!, id: 'acme', profiles: ['12345'] }])
 * @example
 * // Rotation: the old key works until the end of January, the new one from now on.
 * staticKeys([{ id: 'acme', profiles: ['12345'], keys: [
 *   { sha256: OLD_KEY_DIGEST, expiresAt: '2027-01-31T00:00:00Z' },
 *   { sha256: NEW_KEY_DIGEST },
 * ] }])
 * @throws TypeError at construction, naming the entry by its index (`staticKeys: entry 1:
 *   id is required`): for a missing or empty `id` or one already used, a missing key or a
 *   malformed digest, more than one of `key`, `sha256` and `keys`, a key listed twice (also
 *   once as a digest and once in plain text), an unknown field or scope, an `expiresAt` that
 *   is not a time, an `allowedIps` entry that is not an address or a CIDR block, or a field
 *   of the wrong type.
 */
export function staticKeys(keys: readonly StaticKey[]): KeyVerifier {
  if (!Array.isArray(keys)) throw new OptionError(`staticKeys: expects an array of keys, got ${describeType(keys)}`);
  const byDigest = new Map<string, Principal>();
  const byId = new Map<string, Principal>();
  const digestOwner = new Map<string, number>();
  const idOwner = new Map<string, number>();
  keys.forEach((entry: unknown, index) => {
    const where = `staticKeys: entry ${index}`;
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
      throw new OptionError(`${where}: must be an object { key, id, ... }, got ${describeType(entry)}`);
    }
    assertKnownKeys(where, entry, ENTRY_FIELDS);
    const { key, sha256: hex, keys: several, ...principal } = entry as StaticKey;
    const { id } = principal;
    if (id === undefined || id === '') throw new OptionError(`${where}: id is required (a non-empty string naming the key's owner)`);
    if (typeof id !== 'string') throw new OptionError(`${where}: id must be a non-empty string, got ${describeType(id)}`);
    const named = `${where} ("${id}")`;
    const idTwin = idOwner.get(id);
    if (idTwin !== undefined) {
      throw new OptionError(
        `${named}: id "${id}" is already used by entry ${idTwin}; keys with one id would read each other's messages (list a principal's keys in its \`keys\`)`,
      );
    }
    checkPrincipalFields(named, principal);
    const ownKeys = keysOfEntry(named, key, hex, several);
    const frozen = Object.freeze({ ...principal });
    const principalExpiry = principal.expiresAt === undefined ? Number.POSITIVE_INFINITY : readExpiresAt(principal.expiresAt);
    ownKeys.forEach(({ digest, expiresAt }) => {
      const keyTwin = digestOwner.get(digest);
      // The key itself is never printed: it would land in the host's start-up logs.
      if (keyTwin !== undefined) throw new OptionError(`${named}: its key is listed twice, first at entry ${keyTwin}`);
      digestOwner.set(digest, index);
      // A key that expires before its principal answers as a principal that does.
      const own = expiresAt !== undefined && expiresAt < principalExpiry ? Object.freeze({ ...principal, expiresAt }) : frozen;
      // Read now, checked above, so that no request pays for parsing its address blocks.
      keyGuardsOf(own);
      byDigest.set(digest, own);
    });
    idOwner.set(id, index);
    byId.set(id, frozen);
  });
  const verifier: KeyVerifier = (apiKey) => byDigest.get(sha256Hex(apiKey)) ?? null;
  // The owner of a short code an MO message was sent to is found in this table.
  rememberKeyTable(verifier, byId);
  return verifier;
}

/** One key of an entry: its digest, and its own expiry (epoch ms) if it has one. */
interface EntryKey {
  digest: string;
  expiresAt?: number;
}

/** The digest of a `key` or `sha256`, or `null` when neither is usable. */
function digestOf(key: unknown, hex: unknown): string | null {
  if (typeof key === 'string' && key.length > 0) return sha256Hex(key);
  if (typeof hex === 'string' && /^[0-9a-f]{64}$/i.test(hex)) return hex.toLowerCase();
  return null;
}

/** The keys of an entry: its `key` or `sha256`, or each of its `keys`. */
function keysOfEntry(named: string, key: unknown, hex: unknown, several: unknown): EntryKey[] {
  if (key !== undefined && hex !== undefined) throw new OptionError(`${named}: give \`key\` or \`sha256\`, not both`);
  if (several !== undefined && (key !== undefined || hex !== undefined)) {
    throw new OptionError(`${named}: give \`keys\` or a single \`${key === undefined ? 'sha256' : 'key'}\`, not both`);
  }
  if (several === undefined) {
    const digest = digestOf(key, hex);
    if (digest === null) throw new OptionError(`${named}: needs a non-empty \`key\` or a 64-hex-digit \`sha256\``);
    return [{ digest }];
  }
  if (!Array.isArray(several) || several.length === 0) {
    throw new OptionError(`${named}: keys must be a non-empty array of { key } or { sha256 }, each with an optional expiresAt, got ${describeType(several)}`);
  }
  return several.map((item: unknown, at) => {
    const where = `${named}: keys[${at}]`;
    if (typeof item !== 'object' || item === null || Array.isArray(item)) throw new OptionError(`${where} must be an object { key } or { sha256 }, got ${describeType(item)}`);
    assertKnownKeys(where, item, KEY_FIELDS);
    const { key: itemKey, sha256: itemHex, expiresAt } = item as StaticKeyOfPrincipal;
    if (itemKey !== undefined && itemHex !== undefined) throw new OptionError(`${where}: give \`key\` or \`sha256\`, not both`);
    const digest = digestOf(itemKey, itemHex);
    if (digest === null) throw new OptionError(`${where}: needs a non-empty \`key\` or a 64-hex-digit \`sha256\``);
    return expiresAt === undefined ? { digest } : { digest, expiresAt: checkedExpiry(where, expiresAt) };
  });
}

/** `expiresAt` as epoch ms, or an option error naming `where`. */
function checkedExpiry(where: string, expiresAt: unknown): number {
  try {
    return readExpiresAt(expiresAt);
  } catch (error) {
    if (error instanceof ExpiresAtProblem) throw new OptionError(`${where}: ${error.message}`);
    throw error;
  }
}

/** The scope names as an error message lists them. */
const SCOPE_LIST = SCOPES.map((scope) => `'${scope}'`).join(', ');

/** The scope `scope` was probably meant to be (`'quik'` -> `'quick'`), if any. */
function scopeHint(scope: string): string {
  const near = scope.length === 0 ? undefined : nearest(scope, SCOPES);
  return near === undefined ? '' : ` Did you mean '${near}'?`;
}

/** Refuses a `reportFormat` other than 'envelope' and 'flat', naming the nearest one (`'flta'` -> `'flat'`). */
function assertReportFormat(where: string, format: unknown): void {
  if (typeof format === 'string' && (REPORT_FORMATS as readonly string[]).includes(format)) return;
  const near = typeof format === 'string' && format !== '' ? nearest(format, REPORT_FORMATS) : undefined;
  const hint = near === undefined ? '' : ` Did you mean '${near}'?`;
  throw new OptionError(`${where}: unknown reportFormat ${JSON.stringify(format) ?? String(format)}; the formats are 'envelope' and 'flat'.${hint}`);
}

/** Checks the optional {@link Principal} fields of an entry; `where` names the entry. */
function checkPrincipalFields(where: string, principal: Omit<Principal, 'id'>): void {
  const { scopes, disabled, profiles, callbackSecret, reportFormat, inboundUrl, rateLimit, weight, maxQueued, expiresAt, allowedIps } = principal;
  if (inboundUrl !== undefined) assertInboundUrl(where, inboundUrl);
  if (principal.callbackFailoverUrl !== undefined) assertInboundUrl(where, principal.callbackFailoverUrl, 'callbackFailoverUrl');
  if (scopes !== undefined) {
    if (!Array.isArray(scopes)) {
      throw new OptionError(`${where}: scopes must be an array of ${SCOPE_LIST}, got ${describeType(scopes)}`);
    }
    for (const scope of scopes as unknown[]) {
      if (typeof scope !== 'string' || !SCOPES.includes(scope as Scope)) {
        const hint = typeof scope === 'string' ? scopeHint(scope) : '';
        throw new OptionError(`${where}: unknown scope ${JSON.stringify(scope) ?? String(scope)}; the scopes are ${SCOPE_LIST}.${hint}`);
      }
    }
  }
  if (expiresAt !== undefined) checkedExpiry(where, expiresAt);
  if (allowedIps !== undefined) {
    try {
      readAllowedIps(allowedIps);
    } catch (error) {
      if (error instanceof AllowedIpsProblem) throw new OptionError(`${where}: ${error.message}`);
      throw error;
    }
  }
  if (disabled !== undefined && typeof disabled !== 'boolean') {
    throw new OptionError(`${where}: disabled must be true or false, got ${describeType(disabled)}`);
  }
  if (profiles !== undefined) assertStringList(`${where}: profiles`, profiles);
  if (callbackSecret !== undefined) {
    if (typeof callbackSecret !== 'string') {
      throw new OptionError(`${where}: callbackSecret must be a string, got ${describeType(callbackSecret)}`);
    }
    try {
      signingKey(callbackSecret);
    } catch (error) {
      throw new OptionError(`${where}: callbackSecret: ${(error as Error).message}`);
    }
  }
  if (reportFormat !== undefined) assertReportFormat(where, reportFormat);
  const { reportDelivery } = principal;
  if (reportDelivery !== undefined && reportDelivery !== 'push' && reportDelivery !== 'pull') {
    throw new OptionError(`${where}: reportDelivery must be 'push' or 'pull', got ${JSON.stringify(reportDelivery) ?? String(reportDelivery)}`);
  }
  // An integer >= 0, as the request limiter reads it; anything else would fail each request.
  if (rateLimit !== undefined) assertNumber(`${where}: rateLimit`, rateLimit, 0);
  if (weight !== undefined) assertWeight(`${where}: weight`, weight);
  if (maxQueued !== undefined) assertNumber(`${where}: maxQueued`, maxQueued, 1);
  if (principal.numbers !== undefined) assertNumberPolicy(where, principal.numbers);
  assertRetainText(where, principal.retainText);
  try {
    readUnitCaps(principal.dailyUnits, principal.monthlyUnits);
  } catch (error) {
    if (error instanceof UnitCapProblem) throw new OptionError(`${where}: ${error.message}`);
    throw error;
  }
}
