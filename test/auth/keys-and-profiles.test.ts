import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createSmsRouter, staticKeys, staticProfiles } from '../../src/index.js';

const digest = (key: string) => createHash('sha256').update(key).digest('hex');

describe('staticKeys', () => {
  it('accepts plaintext keys and SHA-256 digests, and nothing else', async () => {
    const verify = staticKeys([
      { key: 'plain-key', id: 'a' },
      { sha256: digest('hashed-key').toUpperCase(), id: 'b', scopes: ['quick'] },
    ]);
    expect(await verify('plain-key')).toEqual({ id: 'a' });
    expect(await verify('hashed-key')).toEqual({ id: 'b', scopes: ['quick'] });
    expect(await verify(digest('hashed-key'))).toBeNull(); // the digest itself is not a key
    expect(await verify('plain-key ')).toBeNull();
    expect(await verify('')).toBeNull();
  });

  it('refuses bad entries at construction', () => {
    expect(() => staticKeys([{ key: '', id: 'x' }])).toThrow(/needs a non-empty `key`/);
    expect(() => staticKeys([{ sha256: 'abc', id: 'x' }])).toThrow(/64-hex-digit/);
    expect(() => staticKeys([{ key: 'k', id: 'x' }, { sha256: digest('k'), id: 'y' }])).toThrow(/listed twice/);
  });

  it('hands out principals that a caller cannot change', async () => {
    const verify = staticKeys([{ key: 'k', id: 'a', profiles: ['1'] }]);
    const principal = (await verify('k'))!;
    expect(() => {
      (principal as { id: string }).id = 'b';
    }).toThrow(TypeError);
  });
});

describe('staticProfiles', () => {
  it("finds a profile only for its owners", async () => {
    const resolve = staticProfiles([{ code: '12345', senders: ['22021'], owners: ['acme'] }]);
    expect(await resolve('12345', { id: 'acme' })).toMatchObject({ code: '12345', senders: ['22021'] });
    expect(await resolve('12345', { id: 'someone-else' })).toBeNull();
    expect(await resolve('00000', { id: 'acme' })).toBeNull();
  });
});

describe('options', () => {
  const verifyKey = staticKeys([{ key: 'k', id: 'a' }]);

  it('throw at construction with a did-you-mean hint for a typo', () => {
    expect(() => createSmsRouter({ verifyKey, limits: { maxSegment: 3 } as never })).toThrow(
      'limits: unknown option `maxSegment`. Did you mean `maxSegments`?',
    );
    expect(() => createSmsRouter({ verifyKey, storag: null } as never)).toThrow(/Did you mean `storage`\?/);
    expect(() => createSmsRouter({} as never)).toThrow(/`verifyKey` is required/);
    expect(() => createSmsRouter({ verifyKey, worker: { concurrency: 0 } })).toThrow(/worker.concurrency must be an integer >= 1/);
    expect(() => createSmsRouter({ verifyKey, basePath: 'api' })).toThrow(/must start with "\/"/);
    expect(() => createSmsRouter({ verifyKey, basePath: '/api/:tenant' })).toThrow(/basePath` must be "\/"-separated segments/);
  });
});
