/**
 * `staticKeys` and `staticProfiles` refuse a table with a mistake when it is built, naming
 * the entry by its index, instead of serving with it: two keys without an `id` would be
 * one principal, and key B could read key A's messages.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { OptionError, staticKeys, staticProfiles, type StaticKey, type StaticProfile } from '../../src/index.js';

const digest = (key: string) => createHash('sha256').update(key).digest('hex');
const keys = (entries: unknown[]) => () => staticKeys(entries as StaticKey[]);
const profiles = (entries: unknown[]) => () => staticProfiles(entries as StaticProfile[]);

describe('staticKeys refuses at construction', () => {
  it('an entry without an id, or with an empty one', () => {
    expect(keys([{ key: 'a', id: 'acme' }, { key: 'b', profiles: ['1'] }])).toThrow(
      new OptionError("staticKeys: entry 1: id is required (a non-empty string naming the key's owner)"),
    );
    expect(keys([{ key: 'a', id: '' }])).toThrow(/^staticKeys: entry 0: id is required/);
    expect(keys([{ key: 'a', id: 7 }])).toThrow('staticKeys: entry 0: id must be a non-empty string, got a number');
  });

  it('two entries with one id: their keys would read each other\'s messages', () => {
    expect(keys([{ key: 'a', id: 'acme' }, { key: 'b', id: 'beta' }, { key: 'c', id: 'acme' }])).toThrow(
      /^staticKeys: entry 2 \("acme"\): id "acme" is already used by entry 0/,
    );
  });

  it('one key listed twice, also once as a digest and once in plain text, without printing it', () => {
    expect(keys([{ key: 'secret-1', id: 'a' }, { key: 'secret-1', id: 'b' }])).toThrow(
      'staticKeys: entry 1 ("b"): its key is listed twice, first at entry 0',
    );
    expect(keys([{ sha256: digest('secret-1'), id: 'a' }, { key: 'secret-1', id: 'b' }])).toThrow(
      'staticKeys: entry 1 ("b"): its key is listed twice, first at entry 0',
    );
    expect(keys([{ key: 'secret-1', id: 'a' }, { key: 'secret-1', id: 'b' }])).not.toThrow(/secret-1/);
  });

  it('a callbackFailoverUrl that is not an http or https URL', () => {
    expect(keys([{ key: 'a', id: 'x', callbackFailoverUrl: 'ftp://backup.example/dlr' }])).toThrow(
      'staticKeys: entry 0 ("x"): callbackFailoverUrl must be an http or https URL, got "ftp://backup.example/dlr"',
    );
    expect(keys([{ key: 'a', id: 'x', callbackFailoverUrl: 'https://backup.example/dlr' }])).not.toThrow();
  });

  it('both `key` and `sha256` in one entry', () => {
    expect(keys([{ key: 'a', sha256: digest('b'), id: 'x' }])).toThrow('staticKeys: entry 0 ("x"): give `key` or `sha256`, not both');
  });

  it('an unknown scope, with a hint', () => {
    expect(keys([{ key: 'a', id: 'x', scopes: ['quik'] }])).toThrow(
      `staticKeys: entry 0 ("x"): unknown scope "quik"; the scopes are 'send:quick', 'send:premium', 'read', 'cancel', 'preview', 'callbacks', 'quick', 'premium'. Did you mean 'quick'?`,
    );
    expect(keys([{ key: 'a', id: 'x', scopes: ['quick', 'Premium'] }])).toThrow(/unknown scope "Premium".*Did you mean 'premium'\?/);
    expect(keys([{ key: 'a', id: 'x', scopes: 'quick' }])).toThrow(/scopes must be an array of 'send:quick', .*'premium', got a string/);
  });

  it('a rateLimit of the wrong type', () => {
    expect(keys([{ key: 'a', id: 'x', rateLimit: '100' }])).toThrow(
      'staticKeys: entry 0 ("x"): rateLimit must be an integer >= 0, got 100',
    );
    expect(keys([{ key: 'a', id: 'x', rateLimit: 1.5 }])).toThrow(/rateLimit must be an integer >= 0/);
  });

  it('a reportFormat other than envelope or flat, with a hint', async () => {
    expect(keys([{ key: 'a', id: 'x', reportFormat: 'flta' }])).toThrow(
      `staticKeys: entry 0 ("x"): unknown reportFormat "flta"; the formats are 'envelope' and 'flat'. Did you mean 'flat'?`,
    );
    expect(keys([{ key: 'a', id: 'x', reportFormat: 'json' }])).toThrow(/unknown reportFormat "json"; the formats are 'envelope' and 'flat'\.$/);
    expect(keys([{ key: 'a', id: 'x', reportFormat: true }])).toThrow(/unknown reportFormat true/);
    expect(keys([{ key: 'a', id: 'x', reportformat: 'flat' }])).toThrow('Did you mean `reportFormat`?');
    const verify = staticKeys([{ key: 'a', id: 'acme', reportFormat: 'flat' }, { key: 'b', id: 'beta', reportFormat: 'envelope' }]);
    expect(await verify('a')).toMatchObject({ id: 'acme', reportFormat: 'flat' });
  });

  it('a misspelt field, with a hint, and fields of the wrong type', async () => {
    expect(keys([{ key: 'a', id: 'x', profile: ['1'] }])).toThrow('staticKeys: entry 0: unknown option `profile`. Did you mean `profiles`?');
    // A string would match substrings: '12345'.includes('123').
    expect(keys([{ key: 'a', id: 'x', profiles: '12345' }])).toThrow(/entry 0 \("x"\): profiles must be an array of strings, got a string/);
    expect(keys([{ key: 'a', id: 'x', disabled: 'no' }])).toThrow(/disabled must be true or false, got a string/);
    expect(keys([{ key: 'a', id: 'x', callbackSecret: 'whsec_!!' }])).toThrow(/entry 0 \("x"\): callbackSecret: .*base64/);
    expect(keys(['just-a-key'])).toThrow('staticKeys: entry 0: must be an object { key, id, ... }, got a string');

    // Every field, well formed, still builds.
    const verify = staticKeys([
      { key: 'a', id: 'acme', scopes: ['quick'], profiles: ['1'], rateLimit: 0, disabled: false },
      { sha256: digest('b'), id: 'beta', callbackSecret: 'whsec_dGVzdA==' },
    ]);
    expect(await verify('a')).toMatchObject({ id: 'acme' });
    expect(await verify('b')).toMatchObject({ id: 'beta' });
  });
});

describe('staticKeys refuses at construction the key guards', () => {
  it('a scope of neither set, with a hint toward the nearest', () => {
    expect(keys([{ key: 'a', id: 'x', scopes: ['send:quik'] }])).toThrow(/unknown scope "send:quik"; .* Did you mean 'send:quick'\?/);
    expect(keys([{ key: 'a', id: 'x', scopes: ['reed'] }])).toThrow(/Did you mean 'read'\?/);
    expect(keys([{ key: 'a', id: 'x', scopes: ['send:quick', 'send:premium', 'read', 'cancel', 'preview', 'quick', 'premium'] }])).not.toThrow();
  });

  it('an expiresAt that is not a time, or a time without its offset', () => {
    expect(keys([{ key: 'a', id: 'x', expiresAt: 'tomorrow' }])).toThrow(
      `staticKeys: entry 0 ("x"): expiresAt "tomorrow" is not a valid time; write an RFC 3339 date-time with its offset, such as '2027-01-31T00:00:00Z'`,
    );
    // Read in the server's zone, it would end at a different moment on each host.
    expect(keys([{ key: 'a', id: 'x', expiresAt: '2027-01-31T00:00:00' }])).toThrow(/expiresAt "2027-01-31T00:00:00" is not a valid time/);
    expect(keys([{ key: 'a', id: 'x', expiresAt: '2027-02-30T00:00:00Z' }])).toThrow(/is not a valid time/);
    expect(keys([{ key: 'a', id: 'x', expiresAt: new Date('nope') }])).toThrow(/is not a valid time/);
    expect(keys([{ key: 'a', id: 'x', expiresAt: Number.NaN }])).toThrow(/is not a valid time/);
    expect(keys([{ key: 'a', id: 'x', expiresAt: true }])).toThrow(/expiresAt must be a Date, epoch milliseconds or an RFC 3339 date-time, got a boolean/);
    expect(keys([{ id: 'x', keys: [{ key: 'a', expiresAt: 'soon' }] }])).toThrow(/^staticKeys: entry 0 \("x"\): keys\[0\]: expiresAt "soon" is not a valid time/);
  });

  it('an allowedIps entry that is not an address or a CIDR block, or a list that is not one', () => {
    const where = 'staticKeys: entry 0 ("x"): ';
    expect(keys([{ key: 'a', id: 'x', allowedIps: '10.0.0.0/8' }])).toThrow(`${where}allowedIps must be an array of CIDR blocks, got a string`);
    expect(keys([{ key: 'a', id: 'x', allowedIps: ['10.0.0.0/8', '10.0.0.0/33'] }])).toThrow(`${where}allowedIps[1]: "10.0.0.0/33" has a prefix length outside 0 to 32`);
    expect(keys([{ key: 'a', id: 'x', allowedIps: ['2001:db8::/129'] }])).toThrow(/"2001:db8::\/129" has a prefix length outside 0 to 128/);
    expect(keys([{ key: 'a', id: 'x', allowedIps: ['10.0.0.0/'] }])).toThrow(/has a prefix length outside/);
    expect(keys([{ key: 'a', id: 'x', allowedIps: ['10.0.0.0/8x'] }])).toThrow(/has a prefix length outside/);
    expect(keys([{ key: 'a', id: 'x', allowedIps: ['10.0.0/8'] }])).toThrow(`${where}allowedIps[0]: "10.0.0/8" is not an IPv4 or IPv6 address or CIDR block`);
    expect(keys([{ key: 'a', id: 'x', allowedIps: ['office'] }])).toThrow(/"office" is not an IPv4 or IPv6 address or CIDR block/);
    expect(keys([{ key: 'a', id: 'x', allowedIps: ['fe80::1%eth0'] }])).toThrow(/is not an IPv4 or IPv6 address/);
    expect(keys([{ key: 'a', id: 'x', allowedIps: [10] }])).toThrow(`${where}allowedIps[0] must be a string such as '203.0.113.0/24', got a number`);
    expect(keys([{ key: 'a', id: 'x', allowedIps: ['10.0.0.0/8', '2001:db8::/32', '192.0.2.1', '::1', '::ffff:10.0.0.0/104'] }])).not.toThrow();
  });

  it('several keys given wrong: none, a key beside them, one listed twice, a misspelt field', () => {
    expect(keys([{ id: 'x', keys: [] }])).toThrow(/^staticKeys: entry 0 \("x"\): keys must be a non-empty array of \{ key \} or \{ sha256 \}/);
    expect(keys([{ id: 'x', keys: 'k' }])).toThrow(/keys must be a non-empty array .*got a string/);
    expect(keys([{ id: 'x', key: 'a', keys: [{ key: 'b' }] }])).toThrow('staticKeys: entry 0 ("x"): give `keys` or a single `key`, not both');
    expect(keys([{ id: 'x', keys: [{ key: 'a' }, { sha256: digest('a') }] }])).toThrow('staticKeys: entry 0 ("x"): its key is listed twice, first at entry 0');
    expect(keys([{ key: 'a', id: 'y' }, { id: 'x', keys: [{ key: 'a' }] }])).toThrow('staticKeys: entry 1 ("x"): its key is listed twice, first at entry 0');
    expect(keys([{ id: 'x', keys: [{ key: 'a', sha256: digest('b') }] }])).toThrow('staticKeys: entry 0 ("x"): keys[0]: give `key` or `sha256`, not both');
    expect(keys([{ id: 'x', keys: [{ key: '' }] }])).toThrow('staticKeys: entry 0 ("x"): keys[0]: needs a non-empty `key` or a 64-hex-digit `sha256`');
    expect(keys([{ id: 'x', keys: [{ key: 'a', expires: '2027-01-01T00:00:00Z' }] }])).toThrow(
      'staticKeys: entry 0 ("x"): keys[0]: unknown option `expires`. Did you mean `expiresAt`?',
    );
    expect(keys([{ id: 'x', keys: ['a'] }])).toThrow('staticKeys: entry 0 ("x"): keys[0] must be an object { key } or { sha256 }, got a string');
  });

  it('nothing of a table with every guard well formed: each key answers its principal', async () => {
    const verify = staticKeys([
      { id: 'acme', scopes: ['send:quick', 'read'], allowedIps: ['203.0.113.0/24'], expiresAt: '2030-01-01T00:00:00+03:00', keys: [{ key: 'a' }, { sha256: digest('b'), expiresAt: 1_800_000_000_000 }] },
    ]);
    expect(await verify('a')).toMatchObject({ id: 'acme', scopes: ['send:quick', 'read'] });
    // A key that ends before its principal answers with its own end.
    expect(await verify('b')).toMatchObject({ id: 'acme', expiresAt: 1_800_000_000_000 });
    expect(await verify('c')).toBeNull();
  });
});

describe('staticProfiles refuses at construction', () => {
  it('a missing code, or one listed twice', () => {
    expect(profiles([{ code: '1', owners: ['a'] }, { owners: ['b'] }])).toThrow(
      'staticProfiles: entry 1: code is required (the profile_code callers send)',
    );
    expect(profiles([{ code: '1', owners: ['a'] }, { code: '1', owners: ['b'] }])).toThrow(
      /^staticProfiles: entry 1 \("1"\): code "1" is already used by entry 0/,
    );
  });

  it('owners that are not a list: a string would let a principal whose id is part of it in', () => {
    expect(profiles([{ code: '1', owners: 'acme' }])).toThrow(
      'staticProfiles: entry 0 ("1"): owners must be an array of strings, got a string',
    );
    expect(profiles([{ code: '1' }])).toThrow(/entry 0 \("1"\): owners is required/);
  });

  it('empty senders, and a misspelt field', () => {
    expect(profiles([{ code: '1', owners: ['a'], senders: [] }])).toThrow(/senders is empty; leave it out to send from the code/);
    expect(profiles([{ code: '1', owner: ['a'] }])).toThrow('staticProfiles: entry 0: unknown option `owner`. Did you mean `owners`?');
  });
});
