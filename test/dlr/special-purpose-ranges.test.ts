/**
 * The callback address guard against IANA's special-purpose address registries: one address inside every registry entry, refused unless the entry is globally
 * reachable and allowed on purpose.
 *
 * The rows below are written from the registries themselves, not generated from
 * `src/dlr/special-purpose-ranges.ts`, so a wrong row there fails here; and a test checks
 * that every row there has a row here, so a new entry cannot go untested.
 */
import { BlockList, isIPv4 } from 'node:net';
import { describe, expect, it } from 'vitest';
import { addressProblem, callbackUrlProblem, isBlockedAddress, specialRangeOf } from '../../src/dlr/address-guard.js';
import { IPV4_RANGES, IPV6_RANGES } from '../../src/dlr/special-purpose-ranges.js';

const closed = { allowPrivate: false } as const;

interface Row {
  block: string;
  name: string;
  /** An address inside `block` (and, unless `decidedBy` says otherwise, in no more specific row). */
  sample: string;
  refused: boolean;
  /** The row that decides `sample` when it is not `block` itself (embedded IPv4 forms). */
  decidedBy?: string;
}

// https://www.iana.org/assignments/iana-ipv4-special-registry/ (2025), plus multicast.
const IPV4: Row[] = [
  { block: '0.0.0.0/8', name: '"This network"', sample: '0.1.2.3', refused: true },
  { block: '0.0.0.0/32', name: '"This host on this network"', sample: '0.0.0.0', refused: true },
  { block: '10.0.0.0/8', name: 'Private-Use', sample: '10.20.30.40', refused: true },
  { block: '100.64.0.0/10', name: 'Shared Address Space', sample: '100.100.0.1', refused: true },
  { block: '127.0.0.0/8', name: 'Loopback', sample: '127.0.0.2', refused: true },
  { block: '169.254.0.0/16', name: 'Link Local', sample: '169.254.169.254', refused: true },
  { block: '172.16.0.0/12', name: 'Private-Use', sample: '172.20.0.1', refused: true },
  { block: '192.0.0.0/24', name: 'IETF Protocol Assignments', sample: '192.0.0.100', refused: true },
  { block: '192.0.0.0/29', name: 'IPv4 Service Continuity Prefix', sample: '192.0.0.1', refused: true },
  { block: '192.0.0.8/32', name: 'IPv4 dummy address', sample: '192.0.0.8', refused: true },
  // Globally reachable, refused anyway: anycast services inside the refused 192.0.0.0/24.
  { block: '192.0.0.9/32', name: 'Port Control Protocol Anycast', sample: '192.0.0.9', refused: true },
  { block: '192.0.0.10/32', name: 'Traversal Using Relays around NAT Anycast', sample: '192.0.0.10', refused: true },
  { block: '192.0.0.170/32', name: 'NAT64/DNS64 Discovery', sample: '192.0.0.170', refused: true },
  { block: '192.0.0.171/32', name: 'NAT64/DNS64 Discovery', sample: '192.0.0.171', refused: true },
  { block: '192.0.2.0/24', name: 'Documentation (TEST-NET-1)', sample: '192.0.2.1', refused: true },
  // Globally reachable ordinary unicast: allowed.
  { block: '192.31.196.0/24', name: 'AS112-v4', sample: '192.31.196.1', refused: false },
  { block: '192.52.193.0/24', name: 'AMT', sample: '192.52.193.1', refused: false },
  { block: '192.88.99.0/24', name: 'Deprecated (6to4 Relay Anycast)', sample: '192.88.99.1', refused: true },
  { block: '192.88.99.2/32', name: '6a44-relay anycast address', sample: '192.88.99.2', refused: true },
  { block: '192.168.0.0/16', name: 'Private-Use', sample: '192.168.1.1', refused: true },
  { block: '192.175.48.0/24', name: 'Direct Delegation AS112 Service', sample: '192.175.48.1', refused: false },
  { block: '198.18.0.0/15', name: 'Benchmarking', sample: '198.19.255.1', refused: true },
  { block: '198.51.100.0/24', name: 'Documentation (TEST-NET-2)', sample: '198.51.100.7', refused: true },
  { block: '203.0.113.0/24', name: 'Documentation (TEST-NET-3)', sample: '203.0.113.9', refused: true },
  { block: '240.0.0.0/4', name: 'Reserved', sample: '250.1.2.3', refused: true },
  { block: '255.255.255.255/32', name: 'Limited Broadcast', sample: '255.255.255.255', refused: true },
  { block: '224.0.0.0/4', name: 'Multicast', sample: '239.1.2.3', refused: true },
];

// https://www.iana.org/assignments/iana-ipv6-special-registry/ (2025), plus what the IPv6
// Address Space registry leaves outside global unicast 2000::/3.
const IPV6: Row[] = [
  { block: '::1/128', name: 'Loopback Address', sample: '::1', refused: true },
  { block: '::/128', name: 'Unspecified Address', sample: '::', refused: true },
  // Checked as the IPv4 address carried; public ones are allowed (see below).
  { block: '::ffff:0:0/96', name: 'IPv4-mapped Address', sample: '::ffff:192.168.0.1', refused: true, decidedBy: '192.168.0.0/16' },
  { block: '64:ff9b::/96', name: 'IPv4-IPv6 Translat.', sample: '64:ff9b::192.168.0.1', refused: true, decidedBy: '192.168.0.0/16' },
  { block: '64:ff9b:1::/48', name: 'IPv4-IPv6 Translat.', sample: '64:ff9b:1::8.8.8.8', refused: true },
  { block: '100::/64', name: 'Discard-Only Address Block', sample: '100::1', refused: true },
  { block: '100:0:0:1::/64', name: 'Dummy IPv6 Prefix', sample: '100:0:0:1::1', refused: true },
  { block: '2001::/23', name: 'IETF Protocol Assignments', sample: '2001:1ff::1', refused: true },
  // Teredo whose client is 8.8.8.8 (stored inverted): N/A in the registry, refused anyway.
  { block: '2001::/32', name: 'TEREDO', sample: '2001:0:4136:e378:8000:63bf:f7f7:f7f7', refused: true },
  { block: '2001:1::1/128', name: 'Port Control Protocol Anycast', sample: '2001:1::1', refused: true },
  { block: '2001:1::2/128', name: 'Traversal Using Relays around NAT Anycast', sample: '2001:1::2', refused: true },
  { block: '2001:1::3/128', name: 'DNS-SD Service Registration Protocol Anycast', sample: '2001:1::3', refused: true },
  { block: '2001:2::/48', name: 'Benchmarking', sample: '2001:2::1', refused: true },
  { block: '2001:3::/32', name: 'AMT', sample: '2001:3::1', refused: true },
  { block: '2001:4:112::/48', name: 'AS112-v6', sample: '2001:4:112::1', refused: true },
  { block: '2001:10::/28', name: 'Deprecated (previously ORCHID)', sample: '2001:10::1', refused: true },
  { block: '2001:20::/28', name: 'ORCHIDv2', sample: '2001:20::1', refused: true },
  { block: '2001:30::/28', name: 'Drone Remote ID Protocol Entity Tags (DETs) Prefix', sample: '2001:30::1', refused: true },
  { block: '2001:db8::/32', name: 'Documentation', sample: '2001:db8:1::1', refused: true },
  // 6to4 carrying the public 8.8.8.8: N/A in the registry, refused.
  { block: '2002::/16', name: '6to4', sample: '2002:808:808::1', refused: true },
  { block: '2620:4f:8000::/48', name: 'Direct Delegation AS112 Service', sample: '2620:4f:8000::1', refused: false },
  { block: '3fff::/20', name: 'Documentation', sample: '3fff:123::1', refused: true },
  { block: '5f00::/16', name: 'Segment Routing (SRv6) SIDs', sample: '5f00:1::1', refused: true },
  { block: 'fc00::/7', name: 'Unique-Local', sample: 'fd00::1', refused: true },
  { block: 'fe80::/10', name: 'Link-Local Unicast', sample: 'fe80::1', refused: true },
  { block: '::/3', name: 'Reserved by IETF (outside global unicast 2000::/3)', sample: '1000::1', refused: true },
  { block: '4000::/2', name: 'Reserved by IETF (outside global unicast 2000::/3)', sample: '4000::1', refused: true },
  { block: '8000::/1', name: 'Reserved by IETF (outside global unicast 2000::/3)', sample: '8000::1', refused: true },
  { block: 'fec0::/10', name: 'Site-local (deprecated)', sample: 'fec0::1', refused: true },
  { block: 'ff00::/8', name: 'Multicast', sample: 'ff02::1', refused: true },
];

const ALL = [...IPV4, ...IPV6];

describe('IANA special-purpose registries, one address per entry', () => {
  it.each(ALL.filter((row) => row.refused))('refuses $sample in $block "$name"', ({ sample, block, decidedBy }) => {
    expect(isBlockedAddress(sample)).toBe(true);
    expect(addressProblem(sample, closed)).toMatch(/internal/);
    // The most specific entry decides, and the refusal names it.
    expect(specialRangeOf(sample)?.block).toBe(decidedBy ?? block);
    expect(addressProblem(sample, closed)).toContain(decidedBy ?? block);
    const host = isIPv4(sample) ? sample : `[${sample}]`;
    expect(callbackUrlProblem(`https://${host}/dlr`, closed)).toMatch(/internal/);
  });

  it.each(ALL.filter((row) => !row.refused))('allows $sample in the globally reachable $block "$name"', ({ sample, block }) => {
    expect(isBlockedAddress(sample)).toBe(false);
    expect(addressProblem(sample, closed)).toBeNull();
    expect(specialRangeOf(sample)?.block).toBe(block);
  });

  it('has a test row for every row of the guard table, with the same name and decision', () => {
    const tested = new Map(ALL.map((row) => [row.block, row]));
    for (const range of [...IPV4_RANGES, ...IPV6_RANGES]) {
      const row = tested.get(range.block);
      expect(row, `no test row for ${range.block} ${range.name}`).toBeDefined();
      expect(row!.name).toBe(range.name);
      expect(row!.refused).toBe(range.handling !== 'allow');
    }
    expect(tested.size).toBe(IPV4_RANGES.length + IPV6_RANGES.length);
  });

  it('picks every sample from inside its block', () => {
    for (const row of ALL) {
      const [address, prefix] = row.block.split('/') as [string, string];
      const family = isIPv4(address) ? 'ipv4' : 'ipv6';
      const list = new BlockList();
      list.addSubnet(address, Number(prefix), family);
      expect(list.check(row.sample, family), `${row.sample} in ${row.block}`).toBe(true);
    }
  });

  it('refuses a globally reachable entry only where the table says why', () => {
    for (const range of [...IPV4_RANGES, ...IPV6_RANGES]) {
      if (range.globallyReachable === true && range.handling === 'refuse') expect(range.why, range.block).toBeTruthy();
      if (range.globallyReachable === false && range.handling !== 'refuse') expect(range.why, range.block).toBeTruthy();
      if (range.globallyReachable === 'N/A') expect(range.handling, range.block).toBe('refuse');
    }
  });
});

describe('the edges of 3fff::/20 (documentation, RFC 9637) and 5f00::/16 (SRv6 SIDs, RFC 9602)', () => {
  it.each([
    ['3fff::', '3fff::/20'],
    ['3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff', '3fff::/20'],
    ['5f00::', '5f00::/16'],
    ['5f00:ffff:ffff:ffff:ffff:ffff:ffff:ffff', '5f00::/16'],
  ])('refuses %s, named as %s', (ip, block) => {
    expect(isBlockedAddress(ip)).toBe(true);
    expect(specialRangeOf(ip)?.block).toBe(block);
    expect(callbackUrlProblem(`http://[${ip}]/dlr`, closed)).toMatch(/internal/);
  });

  it('allows the global unicast addresses just outside 3fff::/20', () => {
    expect(isBlockedAddress('3ffe:ffff:ffff:ffff:ffff:ffff:ffff:ffff')).toBe(false);
    expect(isBlockedAddress('3fff:1000::')).toBe(false);
  });

  it('refuses the addresses just outside 5f00::/16 too: they are outside global unicast 2000::/3', () => {
    expect(specialRangeOf('5eff:ffff:ffff:ffff:ffff:ffff:ffff:ffff')?.block).toBe('4000::/2');
    expect(specialRangeOf('5f01::')?.block).toBe('4000::/2');
    expect(isBlockedAddress('5f01::')).toBe(true);
  });

  it('lets a host allow them explicitly, as any internal range', () => {
    const allow = { allowPrivate: ['3fff::/20', '5f00::/16'] };
    expect(addressProblem('3fff::1', allow)).toBeNull();
    expect(addressProblem('5f00::1', allow)).toBeNull();
    expect(addressProblem('2001:db8::1', allow)).not.toBeNull();
  });
});

describe('IPv6 forms that carry an IPv4 address', () => {
  it.each(IPV4.filter((row) => row.refused))('refuses $name ($sample) mapped and through NAT64', ({ sample }) => {
    expect(isBlockedAddress(`::ffff:${sample}`)).toBe(true);
    expect(isBlockedAddress(`64:ff9b::${sample}`)).toBe(true);
  });

  it.each([['8.8.8.8'], ['192.31.196.1'], ['93.184.216.34']])('allows the public %s mapped and through NAT64', (v4) => {
    expect(isBlockedAddress(`::ffff:${v4}`)).toBe(false);
    expect(isBlockedAddress(`64:ff9b::${v4}`)).toBe(false);
  });

  it.each([
    ['::8.8.8.8', 'deprecated IPv4-compatible'],
    ['::ffff:0:8.8.8.8', 'SIIT IPv4-translated'],
    ['2002:808:808::1', '6to4'],
    ['2002:c0a8:101::1', '6to4 of 192.168.1.1'],
    ['2001:0:4136:e378:8000:63bf:f7f7:f7f7', 'Teredo, client 8.8.8.8'],
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', 'Teredo, client 127.0.0.1'],
    ['64:ff9b:1::8.8.8.8', 'local-use NAT64'],
  ])('refuses %s (%s) whatever IPv4 address it carries', (ip) => {
    expect(isBlockedAddress(ip)).toBe(true);
  });
});
