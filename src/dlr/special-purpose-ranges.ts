/**
 * The address blocks the callback address guard (`address-guard.ts`) decides on, written
 * from IANA's two special-purpose address registries as they stand in 2025/2026:
 *
 * - IPv4: https://www.iana.org/assignments/iana-ipv4-special-registry/
 * - IPv6: https://www.iana.org/assignments/iana-ipv6-special-registry/
 *
 * plus the few blocks of IANA's IPv4 and IPv6 Address Space registries that are not
 * unicast (multicast, and IPv6 outside `2000::/3`).
 *
 * Why our own table and not `ipaddr.js`'s `range()`: the copy installed with Express
 * (1.9.1, through proxy-addr) lacks entries this guard must refuse: 198.18.0.0/15
 * (benchmarking), 100::/64, 100:0:0:1::/64, 64:ff9b:1::/48, 2001::/23 beyond Teredo,
 * 2001:2::/48, 2001:10::/28, 3fff::/20 and 5f00::/16, and it records no "Globally
 * Reachable" value, so it cannot tell 192.0.0.9/32 from 192.0.0.8/32.
 * Its names are coarse too (`reserved` mixes documentation, 192.0.0.0/24 and 240.0.0.0/4).
 * Taking a newer major instead would put a second copy beside the one Express uses, and its
 * table is a hand-kept subset of the registries all the same; so this file is the source.
 *
 * Maintenance: when IANA adds an entry, add a row here with its RFC and a test row in
 * `test/dlr/address-guard.test.ts` (a test fails until every row has one).
 */

/**
 * What the guard does with an address in a block.
 *
 * - `refuse`: no delivery report goes there (unless the host's `allowPrivateAddresses`
 *   names it).
 * - `allow`: an ordinary destination, like any public address.
 * - `embedded-ipv4`: the IPv6 address stands for an IPv4 address, which is what gets
 *   dialled; that IPv4 address is checked instead.
 */
export type RangeHandling = 'refuse' | 'allow' | 'embedded-ipv4';

/** One block of a registry, with what the guard does with it. */
export interface SpecialPurposeRange {
  /** The block in CIDR notation, as the registry writes it. */
  readonly block: string;
  /** The registry's name for the block. */
  readonly name: string;
  /** The RFC(s) the registry cites for it. */
  readonly rfc: string;
  /** Which IANA registry the row comes from. */
  readonly registry:
    | 'iana-ipv4-special-registry'
    | 'iana-ipv6-special-registry'
    | 'ipv4-address-space'
    | 'ipv6-address-space';
  /**
   * The registry's "Globally Reachable" column (RFC 8190): `'N/A'` where it has none.
   * `null` for rows from the address-space registries, which have no such column.
   */
  readonly globallyReachable: boolean | 'N/A' | null;
  /** What the guard does with an address in the block; see {@link RangeHandling}. */
  readonly handling: RangeHandling;
  /** Why, where `handling` is not what "Globally Reachable" alone would give. */
  readonly why?: string;
}

// Why the globally reachable entries inside 192.0.0.0/24 and 2001::/23 are refused: each
// is an anycast service address (PCP, TURN, SRP, AMT relays, AS112 DNS sinks) or an
// identifier space (ORCHIDv2, drone DETs), never a customer's HTTP receiver; the guard
// refused their whole covering block before, and the covering block itself is "Globally
// Reachable: False" in the registry. Allowing them would open holes for no customer.
const ANYCAST_SERVICE = 'an anycast service address inside a refused block; no HTTP receiver lives there';
const IDENTIFIER_SPACE = 'identifiers, not host addresses, inside the refused 2001::/23';

/**
 * The IANA IPv4 Special-Purpose Address Registry, every entry, plus multicast.
 *
 * Refused: every entry whose "Globally Reachable" is False or N/A, and the globally
 * reachable 192.0.0.9/32, 192.0.0.10/32 and 192.88.99.2/32 (anycast services inside
 * refused blocks). Allowed: AS112 (192.31.196.0/24, 192.175.48.0/24) and AMT
 * (192.52.193.0/24), globally reachable ordinary unicast space the guard never refused.
 */
export const IPV4_RANGES: readonly SpecialPurposeRange[] = [
  { block: '0.0.0.0/8', name: '"This network"', rfc: 'RFC 791 section 3.2', registry: 'iana-ipv4-special-registry', globallyReachable: false, handling: 'refuse' },
  { block: '0.0.0.0/32', name: '"This host on this network"', rfc: 'RFC 1122 section 3.2.1.3', registry: 'iana-ipv4-special-registry', globallyReachable: false, handling: 'refuse' },
  { block: '10.0.0.0/8', name: 'Private-Use', rfc: 'RFC 1918', registry: 'iana-ipv4-special-registry', globallyReachable: false, handling: 'refuse' },
  { block: '100.64.0.0/10', name: 'Shared Address Space', rfc: 'RFC 6598', registry: 'iana-ipv4-special-registry', globallyReachable: false, handling: 'refuse' },
  { block: '127.0.0.0/8', name: 'Loopback', rfc: 'RFC 1122 section 3.2.1.3', registry: 'iana-ipv4-special-registry', globallyReachable: false, handling: 'refuse' },
  { block: '169.254.0.0/16', name: 'Link Local', rfc: 'RFC 3927', registry: 'iana-ipv4-special-registry', globallyReachable: false, handling: 'refuse' },
  { block: '172.16.0.0/12', name: 'Private-Use', rfc: 'RFC 1918', registry: 'iana-ipv4-special-registry', globallyReachable: false, handling: 'refuse' },
  { block: '192.0.0.0/24', name: 'IETF Protocol Assignments', rfc: 'RFC 6890 section 2.1', registry: 'iana-ipv4-special-registry', globallyReachable: false, handling: 'refuse' },
  { block: '192.0.0.0/29', name: 'IPv4 Service Continuity Prefix', rfc: 'RFC 7335', registry: 'iana-ipv4-special-registry', globallyReachable: false, handling: 'refuse' },
  { block: '192.0.0.8/32', name: 'IPv4 dummy address', rfc: 'RFC 7600', registry: 'iana-ipv4-special-registry', globallyReachable: false, handling: 'refuse' },
  { block: '192.0.0.9/32', name: 'Port Control Protocol Anycast', rfc: 'RFC 7723', registry: 'iana-ipv4-special-registry', globallyReachable: true, handling: 'refuse', why: ANYCAST_SERVICE },
  { block: '192.0.0.10/32', name: 'Traversal Using Relays around NAT Anycast', rfc: 'RFC 8155', registry: 'iana-ipv4-special-registry', globallyReachable: true, handling: 'refuse', why: ANYCAST_SERVICE },
  { block: '192.0.0.170/32', name: 'NAT64/DNS64 Discovery', rfc: 'RFC 8880, RFC 7050 section 2.2', registry: 'iana-ipv4-special-registry', globallyReachable: false, handling: 'refuse' },
  { block: '192.0.0.171/32', name: 'NAT64/DNS64 Discovery', rfc: 'RFC 8880, RFC 7050 section 2.2', registry: 'iana-ipv4-special-registry', globallyReachable: false, handling: 'refuse' },
  { block: '192.0.2.0/24', name: 'Documentation (TEST-NET-1)', rfc: 'RFC 5737', registry: 'iana-ipv4-special-registry', globallyReachable: false, handling: 'refuse' },
  { block: '192.31.196.0/24', name: 'AS112-v4', rfc: 'RFC 7535', registry: 'iana-ipv4-special-registry', globallyReachable: true, handling: 'allow' },
  { block: '192.52.193.0/24', name: 'AMT', rfc: 'RFC 7450', registry: 'iana-ipv4-special-registry', globallyReachable: true, handling: 'allow' },
  { block: '192.88.99.0/24', name: 'Deprecated (6to4 Relay Anycast)', rfc: 'RFC 7526', registry: 'iana-ipv4-special-registry', globallyReachable: 'N/A', handling: 'refuse' },
  { block: '192.88.99.2/32', name: '6a44-relay anycast address', rfc: 'RFC 6751', registry: 'iana-ipv4-special-registry', globallyReachable: true, handling: 'refuse', why: ANYCAST_SERVICE },
  { block: '192.168.0.0/16', name: 'Private-Use', rfc: 'RFC 1918', registry: 'iana-ipv4-special-registry', globallyReachable: false, handling: 'refuse' },
  { block: '192.175.48.0/24', name: 'Direct Delegation AS112 Service', rfc: 'RFC 7534', registry: 'iana-ipv4-special-registry', globallyReachable: true, handling: 'allow' },
  { block: '198.18.0.0/15', name: 'Benchmarking', rfc: 'RFC 2544', registry: 'iana-ipv4-special-registry', globallyReachable: false, handling: 'refuse' },
  { block: '198.51.100.0/24', name: 'Documentation (TEST-NET-2)', rfc: 'RFC 5737', registry: 'iana-ipv4-special-registry', globallyReachable: false, handling: 'refuse' },
  { block: '203.0.113.0/24', name: 'Documentation (TEST-NET-3)', rfc: 'RFC 5737', registry: 'iana-ipv4-special-registry', globallyReachable: false, handling: 'refuse' },
  { block: '240.0.0.0/4', name: 'Reserved', rfc: 'RFC 1112 section 4', registry: 'iana-ipv4-special-registry', globallyReachable: false, handling: 'refuse' },
  { block: '255.255.255.255/32', name: 'Limited Broadcast', rfc: 'RFC 8190, RFC 919 section 7', registry: 'iana-ipv4-special-registry', globallyReachable: false, handling: 'refuse' },
  // Not in the special-purpose registry (multicast has a registry of its own), but an HTTP
  // connection to a group address is never a customer's receiver.
  { block: '224.0.0.0/4', name: 'Multicast', rfc: 'RFC 5771', registry: 'ipv4-address-space', globallyReachable: null, handling: 'refuse' },
];

/**
 * The IANA IPv6 Special-Purpose Address Registry, every entry, plus the address space
 * outside global unicast `2000::/3`.
 *
 * Refused: every entry whose "Globally Reachable" is False or N/A, which takes in all of
 * 6to4 (`2002::/16`) and Teredo (`2001::/32`) whatever IPv4 address they carry, and the
 * globally reachable entries inside `2001::/23`. Allowed: `2620:4f:8000::/48` (AS112).
 * Checked as the IPv4 address they carry: IPv4-mapped `::ffff:0:0/96` and NAT64
 * `64:ff9b::/96`.
 */
export const IPV6_RANGES: readonly SpecialPurposeRange[] = [
  { block: '::1/128', name: 'Loopback Address', rfc: 'RFC 4291', registry: 'iana-ipv6-special-registry', globallyReachable: false, handling: 'refuse' },
  { block: '::/128', name: 'Unspecified Address', rfc: 'RFC 4291', registry: 'iana-ipv6-special-registry', globallyReachable: false, handling: 'refuse' },
  {
    block: '::ffff:0:0/96', name: 'IPv4-mapped Address', rfc: 'RFC 4291', registry: 'iana-ipv6-special-registry', globallyReachable: false, handling: 'embedded-ipv4',
    // Never on the wire (hence False): it is how a dual-stack socket names an IPv4 peer,
    // and dialling it opens an IPv4 connection to the address it carries.
    why: 'a host-local spelling of an IPv4 address; dialling it reaches that IPv4 address',
  },
  {
    block: '64:ff9b::/96', name: 'IPv4-IPv6 Translat.', rfc: 'RFC 6052', registry: 'iana-ipv6-special-registry', globallyReachable: true, handling: 'embedded-ipv4',
    // A NAT64 gateway forwards to the IPv4 address carried in the low 32 bits.
    why: 'a NAT64 gateway forwards to the IPv4 address it carries',
  },
  { block: '64:ff9b:1::/48', name: 'IPv4-IPv6 Translat.', rfc: 'RFC 8215', registry: 'iana-ipv6-special-registry', globallyReachable: false, handling: 'refuse' },
  { block: '100::/64', name: 'Discard-Only Address Block', rfc: 'RFC 6666', registry: 'iana-ipv6-special-registry', globallyReachable: false, handling: 'refuse' },
  { block: '100:0:0:1::/64', name: 'Dummy IPv6 Prefix', rfc: 'RFC 9780', registry: 'iana-ipv6-special-registry', globallyReachable: false, handling: 'refuse' },
  { block: '2001::/23', name: 'IETF Protocol Assignments', rfc: 'RFC 2928', registry: 'iana-ipv6-special-registry', globallyReachable: false, handling: 'refuse' },
  { block: '2001::/32', name: 'TEREDO', rfc: 'RFC 4380, RFC 8190', registry: 'iana-ipv6-special-registry', globallyReachable: 'N/A', handling: 'refuse' },
  { block: '2001:1::1/128', name: 'Port Control Protocol Anycast', rfc: 'RFC 7723', registry: 'iana-ipv6-special-registry', globallyReachable: true, handling: 'refuse', why: ANYCAST_SERVICE },
  { block: '2001:1::2/128', name: 'Traversal Using Relays around NAT Anycast', rfc: 'RFC 8155', registry: 'iana-ipv6-special-registry', globallyReachable: true, handling: 'refuse', why: ANYCAST_SERVICE },
  { block: '2001:1::3/128', name: 'DNS-SD Service Registration Protocol Anycast', rfc: 'RFC 9665', registry: 'iana-ipv6-special-registry', globallyReachable: true, handling: 'refuse', why: ANYCAST_SERVICE },
  { block: '2001:2::/48', name: 'Benchmarking', rfc: 'RFC 5180', registry: 'iana-ipv6-special-registry', globallyReachable: false, handling: 'refuse' },
  { block: '2001:3::/32', name: 'AMT', rfc: 'RFC 7450', registry: 'iana-ipv6-special-registry', globallyReachable: true, handling: 'refuse', why: ANYCAST_SERVICE },
  { block: '2001:4:112::/48', name: 'AS112-v6', rfc: 'RFC 7535', registry: 'iana-ipv6-special-registry', globallyReachable: true, handling: 'refuse', why: ANYCAST_SERVICE },
  { block: '2001:10::/28', name: 'Deprecated (previously ORCHID)', rfc: 'RFC 4843', registry: 'iana-ipv6-special-registry', globallyReachable: 'N/A', handling: 'refuse' },
  { block: '2001:20::/28', name: 'ORCHIDv2', rfc: 'RFC 7343', registry: 'iana-ipv6-special-registry', globallyReachable: true, handling: 'refuse', why: IDENTIFIER_SPACE },
  { block: '2001:30::/28', name: 'Drone Remote ID Protocol Entity Tags (DETs) Prefix', rfc: 'RFC 9374', registry: 'iana-ipv6-special-registry', globallyReachable: true, handling: 'refuse', why: IDENTIFIER_SPACE },
  { block: '2001:db8::/32', name: 'Documentation', rfc: 'RFC 3849', registry: 'iana-ipv6-special-registry', globallyReachable: false, handling: 'refuse' },
  { block: '2002::/16', name: '6to4', rfc: 'RFC 3056', registry: 'iana-ipv6-special-registry', globallyReachable: 'N/A', handling: 'refuse' },
  { block: '2620:4f:8000::/48', name: 'Direct Delegation AS112 Service', rfc: 'RFC 7534', registry: 'iana-ipv6-special-registry', globallyReachable: true, handling: 'allow' },
  { block: '3fff::/20', name: 'Documentation', rfc: 'RFC 9637', registry: 'iana-ipv6-special-registry', globallyReachable: false, handling: 'refuse' },
  { block: '5f00::/16', name: 'Segment Routing (SRv6) SIDs', rfc: 'RFC 9602', registry: 'iana-ipv6-special-registry', globallyReachable: false, handling: 'refuse' },
  { block: 'fc00::/7', name: 'Unique-Local', rfc: 'RFC 4193, RFC 8190', registry: 'iana-ipv6-special-registry', globallyReachable: false, handling: 'refuse' },
  { block: 'fe80::/10', name: 'Link-Local Unicast', rfc: 'RFC 4291', registry: 'iana-ipv6-special-registry', globallyReachable: false, handling: 'refuse' },
  // The IPv6 Address Space registry allocates only 2000::/3 as global unicast; the rest is
  // reserved by the IETF, unique-local, link-local or multicast. Refusing all of it also
  // catches a block the registries add there before this table names it, and the deprecated
  // IPv4-compatible (::a.b.c.d) and SIIT (::ffff:0:a.b.c.d) forms, which no host dials as
  // IPv4. The two forms that do carry a dialled IPv4 address have /96 rows above, which
  // win as the more specific match.
  { block: '::/3', name: 'Reserved by IETF (outside global unicast 2000::/3)', rfc: 'RFC 4291', registry: 'ipv6-address-space', globallyReachable: null, handling: 'refuse' },
  { block: '4000::/2', name: 'Reserved by IETF (outside global unicast 2000::/3)', rfc: 'RFC 4291', registry: 'ipv6-address-space', globallyReachable: null, handling: 'refuse' },
  { block: '8000::/1', name: 'Reserved by IETF (outside global unicast 2000::/3)', rfc: 'RFC 4291', registry: 'ipv6-address-space', globallyReachable: null, handling: 'refuse' },
  { block: 'fec0::/10', name: 'Site-local (deprecated)', rfc: 'RFC 3879', registry: 'ipv6-address-space', globallyReachable: null, handling: 'refuse' },
  { block: 'ff00::/8', name: 'Multicast', rfc: 'RFC 4291', registry: 'ipv6-address-space', globallyReachable: null, handling: 'refuse' },
];
