/**
 * A principal's `allowedIps`: the client addresses its keys may be used from, as CIDR blocks
 * (`203.0.113.0/24`, `2001:db8::/32`) or single addresses, matched with Node's own
 * `net.BlockList`. An IPv4 block also matches the IPv4-mapped IPv6 form of its addresses
 * (`::ffff:203.0.113.7`, what a server listening on `::` sees for an IPv4 client), and the
 * other way round.
 */
import { BlockList, isIP } from 'node:net';
import { describeType } from '../util/adapter-check.js';
import { rememberRecent } from '../util/remember-recent.js';

/** Tells whether a client address (`req.ip`) is one of a principal's allowed ones. */
export type AddressCheck = (address: string | undefined) => boolean;

/** A list that cannot be read, with the reason; the caller words the error. */
export class AllowedIpsProblem extends Error {
  override name = 'AllowedIpsProblem';
}

/**
 * Reads `list` into an {@link AddressCheck}.
 *
 * @throws AllowedIpsProblem naming the first entry that is not an address or a block whose
 *   prefix fits its family (`/0` to `/32` for IPv4, `/0` to `/128` for IPv6), or when `list`
 *   is not an array of strings. An empty list is allowed: it admits no address.
 */
export function readAllowedIps(list: unknown): AddressCheck {
  if (!Array.isArray(list)) throw new AllowedIpsProblem(`allowedIps must be an array of CIDR blocks, got ${describeType(list)}`);
  const blocks = new BlockList();
  list.forEach((entry: unknown, index) => {
    if (typeof entry !== 'string') throw new AllowedIpsProblem(`allowedIps[${index}] must be a string such as '203.0.113.0/24', got ${describeType(entry)}`);
    const slash = entry.indexOf('/');
    const address = slash === -1 ? entry : entry.slice(0, slash);
    const family = isIP(address);
    if (family === 0 || address.includes('%')) {
      throw new AllowedIpsProblem(`allowedIps[${index}]: ${JSON.stringify(entry)} is not an IPv4 or IPv6 address or CIDR block`);
    }
    const most = family === 4 ? 32 : 128;
    const prefixText = slash === -1 ? String(most) : entry.slice(slash + 1);
    const prefix = /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : Number.NaN;
    if (!(prefix <= most)) {
      throw new AllowedIpsProblem(`allowedIps[${index}]: ${JSON.stringify(entry)} has a prefix length outside 0 to ${most}`);
    }
    blocks.addSubnet(address, prefix, family === 4 ? 'ipv4' : 'ipv6');
  });
  // BlockList.check costs about 10 us (Node 20), a few percent of a request, so the answers
  // are remembered for the addresses seen lately: a key's clients are few and recurring.
  const allowed = rememberRecent((address: string) => {
    // A link-local address may carry its interface (`fe80::1%eth0`), which BlockList does not read.
    const zone = address.indexOf('%');
    const bare = zone === -1 ? address : address.slice(0, zone);
    const family = isIP(bare);
    return family !== 0 && blocks.check(bare, family === 4 ? 'ipv4' : 'ipv6');
  }, ADDRESSES_KEPT);
  return (address) => address !== undefined && allowed(address);
}

/** How many client addresses each list remembers its answer for. */
const ADDRESSES_KEPT = 1024;

/**
 * {@link readAllowedIps} remembered by the list's text, for the lists of a host's own key
 * verifier: one that builds a new principal per request would otherwise have its list read
 * on every request.
 */
export const allowedIpsByText = rememberRecent((text: string) => readAllowedIps(JSON.parse(text) as unknown), 1024);
