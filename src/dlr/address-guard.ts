/**
 * Which addresses a delivery report may be sent to: the SSRF guard
 * (docs/delivery-reports.md#ssrf-guard).
 *
 * Two checks use it. {@link callbackUrlProblem} runs at request time and refuses what is
 * wrong in the URL itself (scheme, credentials, a literal internal IP in any spelling the
 * WHATWG URL parser normalises). {@link addressProblem} runs at connect time on every
 * address a host name resolves to, which is what stops DNS rebinding: the address checked
 * is the address dialled (see `post.ts`).
 *
 * What counts as internal is the table in `special-purpose-ranges.ts`, written from IANA's
 * IPv4 and IPv6 special-purpose address registries.
 */
import { BlockList, isIPv4, isIPv6 } from 'node:net';
import { rememberRecent } from '../util/remember-recent.js';
import { IPV4_RANGES, IPV6_RANGES, type SpecialPurposeRange } from './special-purpose-ranges.js';
import { OptionError } from '../errors.js';

/**
 * Which internal addresses the host allows anyway (development, tests).
 *
 * `true` allows every address; `false` none; a list allows the addresses and CIDR ranges
 * it names (`'127.0.0.0/8'`, `'::1/128'`, `'10.1.2.3'`), IPv4 and IPv6 alike.
 */
export interface AddressAllowance {
  /** `true`, `false`, or a list of IPs and CIDR ranges allowed despite being internal. */
  allowPrivate: boolean | readonly string[];
}

/** A row of the range tables, compiled for matching. */
interface CompiledRange {
  readonly prefix: number;
  /** The network: a 32-bit value for IPv4, eight 16-bit groups for IPv6. */
  readonly network: number | readonly number[];
  readonly range: SpecialPurposeRange;
}

function compileRanges(ranges: readonly SpecialPurposeRange[], parse: (address: string) => number | readonly number[] | null): CompiledRange[] {
  const rows = ranges.map((range) => {
    const [address, prefixText] = range.block.split('/') as [string, string];
    const network = parse(address);
    if (network === null) throw new Error(`special-purpose range ${range.block} does not parse`);
    return { prefix: Number(prefixText), network, range };
  });
  // Most specific first, so the first match is the registry entry that decides: 192.0.0.9/32
  // before 192.0.0.0/24, 64:ff9b::/96 before ::/3.
  return rows.sort((a, b) => b.prefix - a.prefix);
}

/** An IPv4 address in dotted-quad form as an unsigned 32-bit number. */
function ipv4Value(ip: string): number {
  const [a, b, c, d] = ip.split('.').map(Number) as [number, number, number, number];
  return ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;
}

const V4_RANGES = compileRanges(IPV4_RANGES, (address) => (isIPv4(address) ? ipv4Value(address) : null));
const V6_RANGES = compileRanges(IPV6_RANGES, parseIPv6);

function inV4(value: number, row: CompiledRange): boolean {
  if (row.prefix === 0) return true;
  const mask = (0xffffffff << (32 - row.prefix)) >>> 0;
  return ((value & mask) >>> 0) === row.network;
}

function inV6(groups: readonly number[], row: CompiledRange): boolean {
  const network = row.network as readonly number[];
  let bits = row.prefix;
  for (let i = 0; bits > 0; i++, bits -= 16) {
    const mask = bits >= 16 ? 0xffff : (0xffff << (16 - bits)) & 0xffff;
    if ((groups[i]! & mask) !== network[i]!) return false;
  }
  return true;
}

/** Parses an IPv6 address (zone id allowed) into its eight 16-bit groups, or `null`. */
function parseIPv6(ip: string): number[] | null {
  const zone = ip.indexOf('%');
  const address = zone === -1 ? ip : ip.slice(0, zone);
  if (!isIPv6(address)) return null;
  let head = address;
  const tail: number[] = [];
  if (address.includes('.')) {
    const lastColon = address.lastIndexOf(':');
    const octets = address.slice(lastColon + 1).split('.').map(Number);
    tail.push(((octets[0]! << 8) | octets[1]!) >>> 0, ((octets[2]! << 8) | octets[3]!) >>> 0);
    head = address.slice(0, lastColon + 1);
    if (!head.endsWith('::')) head = head.slice(0, -1);
  }
  const halves = head.split('::');
  const left = halves[0] ? halves[0].split(':') : [];
  const right = halves.length > 1 && halves[1] ? halves[1].split(':') : [];
  const fill = halves.length > 1 ? 8 - tail.length - left.length - right.length : 0;
  const hex = (group: string) => parseInt(group, 16);
  const groups = [...left.map(hex), ...new Array<number>(fill).fill(0), ...right.map(hex), ...tail];
  return groups.length === 8 ? groups : null;
}

/** Eight groups as plain IPv6 text (no zone, no dotted tail), for `BlockList`. */
function formatIPv6(g: readonly number[]): string {
  return g.map((group) => group.toString(16)).join(':');
}

function dotted(high: number, low: number): string {
  return `${high >>> 8}.${high & 0xff}.${low >>> 8}.${low & 0xff}`;
}

/** The most specific IPv6 row containing `groups`, or `null` (ordinary global unicast). */
function v6Row(groups: readonly number[]): CompiledRange | null {
  for (const row of V6_RANGES) if (inV6(groups, row)) return row;
  return null;
}

/**
 * The IPv4 address that is dialled when `groups` is dialled, for the two forms whose row
 * says `embedded-ipv4`: IPv4-mapped `::ffff:a.b.c.d` and NAT64 `64:ff9b::a.b.c.d`.
 * Otherwise `null`. (6to4, Teredo, the deprecated IPv4-compatible `::a.b.c.d` and SIIT
 * `::ffff:0:a.b.c.d` forms are refused outright by their rows, whatever they carry.)
 */
function embeddedIPv4(groups: readonly number[]): string | null {
  const row = v6Row(groups);
  return row !== null && row.range.handling === 'embedded-ipv4' ? dotted(groups[6]!, groups[7]!) : null;
}

/** The row that decides an IPv4 address, or `null` for an ordinary public address. */
function v4Range(ip: string): SpecialPurposeRange | null {
  const value = ipv4Value(ip);
  for (const row of V4_RANGES) if (inV4(value, row)) return row.range;
  return null;
}

/**
 * The special-purpose range that decides `ip`, or `null` for an ordinary public address
 * (or a string that is no IP address). For an IPv4-mapped or NAT64 address it is the
 * range of the IPv4 address carried. See `special-purpose-ranges.ts` for the table.
 */
export function specialRangeOf(ip: string): SpecialPurposeRange | null {
  if (isIPv4(ip)) return v4Range(ip);
  const groups = parseIPv6(ip);
  if (groups === null) return null;
  const row = v6Row(groups);
  if (row === null) return null;
  if (row.range.handling === 'embedded-ipv4') return v4Range(dotted(groups[6]!, groups[7]!));
  return row.range;
}

/**
 * True when `ip` is an address no delivery report may reach unless the host allows it:
 * every entry of IANA's IPv4 and IPv6 special-purpose registries that is not globally
 * reachable (private, loopback, link-local, CGNAT, documentation, benchmarking, discard,
 * 6to4, Teredo, SRv6 SIDs and the rest), multicast, broadcast, IPv6 outside global unicast
 * `2000::/3`, and IPv4-mapped or NAT64 forms of any refused IPv4 address. The table, and
 * which globally reachable entries are refused anyway, is in `special-purpose-ranges.ts`.
 *
 * Anything that is not an IP address at all counts as blocked: the guard fails closed.
 */
export function isBlockedAddress(ip: string): boolean {
  if (!isIPv4(ip) && parseIPv6(ip) === null) return true;
  return specialRangeOf(ip)?.handling === 'refuse';
}

/** An allowance turned into a lookup structure; built once per allowance object. */
type CompiledAllowance = true | false | BlockList;

const compiled = new WeakMap<object, CompiledAllowance>();

/**
 * Checks and compiles a list of allowed IPs and CIDR ranges. Throws a `TypeError` naming
 * the first bad entry; `resolveDlrOptions` calls it so a typo fails at construction.
 */
export function compileAllowList(entries: readonly string[]): BlockList {
  const list = new BlockList();
  for (const entry of entries) {
    if (typeof entry !== 'string') throw new OptionError(`allowPrivateAddresses: ${String(entry)} is not a string`);
    const slash = entry.indexOf('/');
    const address = slash === -1 ? entry : entry.slice(0, slash);
    const family = isIPv4(address) ? 'ipv4' : isIPv6(address) ? 'ipv6' : null;
    if (family === null) {
      throw new OptionError(`allowPrivateAddresses: ${JSON.stringify(entry)} is not an IP address or CIDR range`);
    }
    const max = family === 'ipv4' ? 32 : 128;
    const prefixText = slash === -1 ? String(max) : entry.slice(slash + 1);
    const prefix = /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : NaN;
    if (!(prefix >= 0 && prefix <= max)) {
      throw new OptionError(`allowPrivateAddresses: ${JSON.stringify(entry)} has a prefix length outside 0..${max}`);
    }
    list.addSubnet(address, prefix, family);
  }
  return list;
}

function compile(allow: AddressAllowance): CompiledAllowance {
  const setting = allow.allowPrivate;
  if (typeof setting === 'boolean') return setting;
  let list = compiled.get(setting);
  if (list === undefined) compiled.set(setting, (list = compileAllowList(setting)));
  return list;
}

/**
 * True when the allowance explicitly admits `ip`, or the IPv4 address it is dialled as
 * (IPv4-mapped or NAT64 forms only, as in {@link isBlockedAddress}).
 */
function isAllowed(ip: string, allowance: CompiledAllowance): boolean {
  if (typeof allowance === 'boolean') return allowance;
  if (isIPv4(ip)) return allowance.check(ip, 'ipv4');
  const groups = parseIPv6(ip);
  if (groups === null) return false;
  if (allowance.check(formatIPv6(groups), 'ipv6')) return true;
  const v4 = embeddedIPv4(groups);
  return v4 !== null && allowance.check(v4, 'ipv4');
}

/**
 * Why a report may not be sent to the resolved address `ip`, or `null` when it may: the
 * connect-time check. The allowance list is compiled once per `allow` object.
 */
export function addressProblem(ip: string, allow: AddressAllowance): string | null {
  if (!isBlockedAddress(ip)) return null;
  if (isAllowed(ip, compile(allow))) return null;
  // Naming the registry entry tells the host why a public-looking address was refused
  // (3fff::/20 and 5f00::/16 look like any other IPv6 address).
  const range = specialRangeOf(ip);
  const entry = range === null ? '' : ` (${range.block} ${range.name}, ${range.rfc})`;
  return `address ${ip} is private, loopback, link-local or otherwise internal${entry}`;
}

/**
 * Why `url` may not be a `dlr_callback_url`, or `null` when it is acceptable: the
 * request-time check. Cheap: one URL parse and, for a literal IP host, one range lookup.
 *
 * Refuses what is not an absolute http(s) URL, a URL with credentials, and a literal IP
 * host (in any spelling the URL parser normalises: `127.1`, `0x7f000001`,
 * `[::ffff:7f00:1]`) or a `localhost` name that is internal and not allowed. A host name
 * is not resolved here: its addresses are checked when the report is sent.
 */
export function callbackUrlProblem(url: string, allow: AddressAllowance): string | null {
  // Remembered per allowance: a host's few callback URLs are checked for every report
  // (and again just before it is sent), and Node's BlockList builds a SocketAddress object
  // per check, which shows in profiles of the report path.
  let check = checkers.get(allow);
  if (check === undefined) checkers.set(allow, (check = rememberRecent((checked: string) => urlProblem(checked, allow), 1024)));
  return check(url);
}

/** {@link callbackUrlProblem}'s remembered checks, one per allowance. */
const checkers = new WeakMap<AddressAllowance, (url: string) => string | null>();

function urlProblem(url: string, allow: AddressAllowance): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'must be an absolute http or https URL';
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return 'must be an http or https URL';
  if (parsed.username !== '' || parsed.password !== '') return 'must not contain credentials';
  const host = parsed.hostname;
  if (host === '') return 'must name a host';
  const ip = host.startsWith('[') ? host.slice(1, -1) : isIPv4(host) ? host : null;
  if (ip !== null) {
    return addressProblem(ip, allow) === null ? null : 'must not point to a private, loopback or internal address';
  }
  // `localhost` names always resolve to loopback (RFC 6761): refuse them now, not later.
  const name = host.endsWith('.') ? host.slice(0, -1) : host;
  if ((name === 'localhost' || name.endsWith('.localhost')) && addressProblem('127.0.0.1', allow) !== null) {
    return 'must not point to a private, loopback or internal address';
  }
  return null;
}
