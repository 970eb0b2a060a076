/**
 * Which addresses a delivery report may be sent to: the SSRF guard of SPEC section 4.
 *
 * Two checks use it. {@link callbackUrlProblem} runs at request time and refuses what is
 * wrong in the URL itself (scheme, credentials, a literal internal IP in any spelling the
 * WHATWG URL parser normalises). {@link addressProblem} runs at connect time on every
 * address a host name resolves to, which is what stops DNS rebinding: the address checked
 * is the address dialled (see `post.ts`).
 */
import { BlockList, isIPv4, isIPv6 } from 'node:net';
import { rememberRecent } from '../util/remember-recent.js';

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

/** IPv4 ranges no delivery report may reach: internal, special-purpose or not unicast. */
const BLOCKED_V4: readonly [string, number][] = [
  ['0.0.0.0', 8], // "this network", unspecified
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, cloud metadata services
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay anycast
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, and 255.255.255.255 broadcast
];

/**
 * IPv6 ranges no delivery report may reach. The forms that carry an IPv4 address
 * (mapped, translated, compatible, NAT64, 6to4, Teredo) are not listed: the IPv4 address
 * inside them is checked instead, see {@link embeddedIPv4}.
 */
const BLOCKED_V6: readonly [string, number][] = [
  ['::', 8], // reserved: unspecified, loopback, deprecated IPv4-compatible forms
  ['64:ff9b:1::', 48], // local-use NAT64
  ['100::', 64], // discard-only
  ['2001::', 23], // IETF protocol assignments (Teredo is handled before this list)
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
];

const blockedV4 = new BlockList();
for (const [network, prefix] of BLOCKED_V4) blockedV4.addSubnet(network, prefix, 'ipv4');
const blockedV6 = new BlockList();
for (const [network, prefix] of BLOCKED_V6) blockedV6.addSubnet(network, prefix, 'ipv6');

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

function dotted(high: number, low: number): string {
  return `${high >>> 8}.${high & 0xff}.${low >>> 8}.${low & 0xff}`;
}

/**
 * The IPv4 address an IPv6 address stands for, if it is one of the forms that route to or
 * translate into IPv4: mapped `::ffff:a.b.c.d`, translated `::ffff:0:a.b.c.d`, compatible
 * `::a.b.c.d`, NAT64 `64:ff9b::a.b.c.d`, 6to4 `2002:AABB:CCDD::` and Teredo (whose client
 * address is stored inverted). Otherwise `null`.
 */
function embeddedIPv4(g: readonly number[]): string | null {
  const [g0, g1, g2, g3, g4, g5, g6, g7] = g as [number, number, number, number, number, number, number, number];
  const zeroTo3 = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0;
  if (zeroTo3 && g4 === 0 && (g5 === 0xffff || g5 === 0)) return dotted(g6, g7);
  if (zeroTo3 && g4 === 0xffff && g5 === 0) return dotted(g6, g7);
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return dotted(g6, g7);
  if (g0 === 0x2002) return dotted(g1, g2);
  if (g0 === 0x2001 && g1 === 0) return dotted(~g6 & 0xffff, ~g7 & 0xffff);
  return null;
}

function formatIPv6(g: readonly number[]): string {
  return g.map((group) => group.toString(16)).join(':');
}

/**
 * True when `ip` is an address no delivery report may reach unless the host allows it:
 * private, loopback, link-local, CGNAT, unique-local, multicast, unspecified, broadcast,
 * documentation and other special-purpose ranges, and every IPv6 form that carries such
 * an IPv4 address (mapped, compatible, NAT64, 6to4, Teredo).
 *
 * Anything that is not an IP address at all counts as blocked: the guard fails closed.
 */
export function isBlockedAddress(ip: string): boolean {
  if (isIPv4(ip)) return blockedV4.check(ip, 'ipv4');
  const groups = parseIPv6(ip);
  if (groups === null) return true;
  const v4 = embeddedIPv4(groups);
  if (v4 !== null) return blockedV4.check(v4, 'ipv4');
  return blockedV6.check(formatIPv6(groups), 'ipv6');
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
    if (typeof entry !== 'string') throw new TypeError(`allowPrivateAddresses: ${String(entry)} is not a string`);
    const slash = entry.indexOf('/');
    const address = slash === -1 ? entry : entry.slice(0, slash);
    const family = isIPv4(address) ? 'ipv4' : isIPv6(address) ? 'ipv6' : null;
    if (family === null) {
      throw new TypeError(`allowPrivateAddresses: ${JSON.stringify(entry)} is not an IP address or CIDR range`);
    }
    const max = family === 'ipv4' ? 32 : 128;
    const prefixText = slash === -1 ? String(max) : entry.slice(slash + 1);
    const prefix = /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : NaN;
    if (!(prefix >= 0 && prefix <= max)) {
      throw new TypeError(`allowPrivateAddresses: ${JSON.stringify(entry)} has a prefix length outside 0..${max}`);
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

/** True when the allowance explicitly admits `ip` (or the IPv4 address it carries). */
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
  return `address ${ip} is private, loopback, link-local or otherwise internal`;
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
  // per check, which showed in profiles of the report path.
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
