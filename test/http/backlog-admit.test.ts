/**
 * What the backlog bounds cost a request that passes them: between two reads of the queue
 * count, nothing but arithmetic (no storage call, no promise); a count older than
 * `refreshMs` is read again first. Driven through `BacklogGate` with a clock the test sets.
 */
import { describe, expect, it } from 'vitest';
import { BacklogGate } from '../../src/http/backlog.js';
import { BACKLOG_DEFAULTS } from '../../src/http/options.js';
import { SmsError } from '../../src/errors.js';
import type { QueueCount } from '../../src/storage/contract.js';

const principal = { id: 'a' };

function countedQueue(queued: number) {
  const state = { queued, reads: 0, clock: 1_700_000_000_000 };
  const count = async (): Promise<QueueCount> => {
    state.reads++;
    return { transactional: 0, bulk: state.queued, oldestAcceptedAt: null };
  };
  return { state, gate: new BacklogGate(count, { ...BACKLOG_DEFAULTS, perKey: 10, refreshMs: 1_000 }, () => state.clock) };
}

describe('BacklogGate.admit', () => {
  it('admits a request between two counts at once, without a storage read or a promise', async () => {
    const { state, gate } = countedQueue(0);
    await gate.admit(principal, 1);
    const reads = state.reads;
    state.clock += 500;
    expect(gate.admit(principal, 1)).toBeUndefined();
    expect(gate.admit(principal, 1)).toBeUndefined();
    expect(state.reads).toBe(reads);
  });

  it('refuses at once, with the 429, a request past the bound between two counts', async () => {
    const { gate } = countedQueue(8);
    await gate.admit(principal, 1);
    expect(() => gate.admit(principal, 2)).toThrow(SmsError);
    expect(gate.admit(principal, 1)).toBeUndefined();
  });

  it('reads the count again once it is older than refreshMs, and admits against the new count', async () => {
    const { state, gate } = countedQueue(0);
    await gate.admit(principal, 1);
    const reads = state.reads;
    state.queued = 10;
    state.clock += 1_000;
    const admitting = gate.admit(principal, 1);
    expect(admitting).toBeInstanceOf(Promise);
    await expect(admitting).rejects.toMatchObject({ code: 'QUEUE_FULL' });
    expect(state.reads).toBeGreaterThan(reads);
  });
});
