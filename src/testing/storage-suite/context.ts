/**
 * The storage contract suite's harness and the helpers every topic's tests are written with:
 * the runner's `describe` and `it` as the host passes them, and `test`, which gives each
 * test a fresh, ready storage and disposes of it whatever happens. Kept apart from the
 * topics so that each of them receives the same helpers and none has to know how a storage
 * is made or disposed of.
 *
 * @module
 */
import assert from 'node:assert/strict';
import type { MessageRecord, NewMessage, Storage } from '../../storage/contract.js';
import { T0 } from './fixtures.js';

/** The two functions of a test runner the suite needs (vitest, node:test, jest, mocha). */
export interface StorageSuiteHarness {
  /** Groups tests, like the runner's `describe`. */
  describe: (name: string, fn: () => void) => void;
  /** Declares one test, like the runner's `it`; the suite's tests are async. */
  it: (name: string, fn: () => Promise<void> | void) => void;
}

/** How the suite makes and disposes of the storage under test. */
export interface StorageSuiteOptions {
  /** Name shown in the describe block. */
  name: string;
  /** Makes a new, EMPTY storage for one test (ready() is called by the suite). */
  create: () => Promise<Storage>;
  /** Disposes of one made by create (the suite calls storage.close?.() first). */
  destroy?: (storage: Storage) => Promise<void>;
}

/** What each topic's tests are registered with. */
export interface SuiteContext {
  /** The runner's `describe`. */
  describe: StorageSuiteHarness['describe'];
  /**
   * One test with a fresh, ready storage that is disposed of whatever happens. `skip(reason)`
   * skips it through the runner when the storage lacks an optional method (the test then
   * returns): vitest, node:test and mocha report it skipped with the reason; a runner with
   * no skip at run time (jest) reports it passed.
   */
  test: (name: string, fn: (storage: Storage, skip: (reason: string) => void) => Promise<void>) => void;
  /** Inserts and returns the messages. */
  insert: (storage: Storage, ...messages: NewMessage[]) => Promise<NewMessage[]>;
  /** The stored record of `message`; fails the test if there is none. */
  get: (storage: Storage, message: NewMessage) => Promise<MessageRecord>;
  /** Submits every part of `message` at `now` and returns the carrier ids (`<ref>-c<index>`). */
  submitAll: (storage: Storage, message: NewMessage, now?: number) => Promise<string[]>;
}

/** The helpers for one adapter's run of the suite. */
export function suiteContext(harness: StorageSuiteHarness, options: StorageSuiteOptions): SuiteContext {
  const { describe, it } = harness;
  return {
    describe,
    test: (name, fn) => {
      // A function, not an arrow, for the runner's handles: vitest and node:test pass a
      // context as the first argument, mocha binds one to `this`. No declared parameter, so
      // that no runner takes the test for one that calls back `done`.
      it(name, async function (this: unknown) {
        const skip = runnerSkip(arguments[0], this);
        const storage = await options.create();
        try {
          await storage.ready?.();
          await fn(storage, skip);
        } finally {
          try {
            await storage.close?.();
          } finally {
            await options.destroy?.(storage);
          }
        }
      });
    },
    insert: async (storage, ...messages) => {
      await storage.insertMessages(messages);
      return messages;
    },
    get: async (storage, message) => {
      const record = await storage.getMessage(message.principalId, message.ref);
      assert.ok(record, `message ${message.ref} should be stored`);
      return record;
    },
    submitAll: async (storage, message, now = T0 + 10) => {
      const ids: string[] = [];
      for (let index = 0; index < message.smsCount; index++) {
        const id = `${message.ref}-c${index}`;
        ids.push(id);
        await storage.recordSubmission(message.ref, index, id, now);
      }
      return ids;
    },
  };
}

/**
 * The runner's skip at run time, from its test context (`ctx.skip(note)` in vitest,
 * `t.skip(message)` in node:test, `this.skip()` in mocha; vitest and mocha throw to stop the
 * test), or one that does nothing when it has none. Shared with the record-store suite.
 */
export function runnerSkip(context: unknown, self: unknown): (reason: string) => void {
  for (const candidate of [context, self]) {
    if ((typeof candidate !== 'object' && typeof candidate !== 'function') || candidate === null) continue;
    const skip = (candidate as { skip?: unknown }).skip;
    if (typeof skip === 'function') return (reason) => void skip.call(candidate, reason);
  }
  return () => {};
}
