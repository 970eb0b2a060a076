import { describe, expect, it } from 'vitest';
import { MemoryStorage } from '../../src/storage/memory.js';
import { buildNewMessage, runStorageContract } from '../../src/testing/storage-suite.js';

runStorageContract({ describe, it }, { name: 'MemoryStorage', create: async () => new MemoryStorage() });

describe('MemoryStorage', () => {
  it('keeps each instance to itself', async () => {
    const one = new MemoryStorage();
    const two = new MemoryStorage();
    const message = buildNewMessage();
    await one.insertMessages([message]);
    expect(await two.getMessage(message.principalId, message.ref)).toBeNull();
    expect(await one.getMessage(message.principalId, message.ref)).not.toBeNull();
  });
});
