/**
 * The record-store contract suite's harness and the helpers every topic's tests are written
 * with: `test`, which gives each test a fresh, ready record store and disposes of it whatever
 * happens, and the few calls most tests make (insert rows that must be stored, read a row that
 * must exist). Kept apart from the topics so that none of them has to know how a store is
 * made or disposed of.
 *
 * @module
 */
import assert from 'node:assert/strict';
import type { MessageRow, RecordStore } from '../../storage/record-store.js';
import { runnerSkip, type StorageSuiteHarness } from '../storage-suite/context.js';

/** The two functions of a test runner the suite needs (vitest, node:test, jest, mocha). */
export type RecordStoreSuiteHarness = StorageSuiteHarness;

/** How the suite makes and disposes of the record store under test. */
export interface RecordStoreSuiteOptions {
  /** Name shown in the describe block. */
  name: string;
  /** Makes a new, EMPTY record store for one test (ready() is called by the suite). */
  create: () => Promise<RecordStore>;
  /** Disposes of one made by create (the suite calls store.close?.() first). */
  destroy?: (store: RecordStore) => Promise<void>;
  /**
   * The store keeps the row objects it is given and hands them out as they are, never
   * changing one (the contract allows it on the condition that the caller never changes a
   * row it handed over or got either): the tests that change a row after handing it over
   * are skipped. Default `false`: the store copies what it keeps, and they run.
   */
  sharesRows?: boolean;
  /**
   * Whether the full `Storage` contract suite also runs over the library's ledger on stores
   * from `create` (`runStorageContract`): the rules a store's answers feed, checked end to
   * end. Default `true`.
   */
  throughLedger?: boolean;
}

/** What each topic's tests are registered with. */
export interface RecordSuiteContext {
  /** The runner's `describe`. */
  describe: RecordStoreSuiteHarness['describe'];
  /**
   * One test with a fresh, ready store that is disposed of whatever happens. `skip(reason)`
   * skips it through the runner when the store lacks an optional method (the test then
   * returns): vitest, node:test and mocha report it skipped with the reason; a runner with
   * no skip at run time (jest) reports it passed.
   */
  test: (name: string, fn: (store: RecordStore, skip: (reason: string) => void) => Promise<void>) => void;
  /** Whether the store shares its rows with the caller ({@link RecordStoreSuiteOptions.sharesRows}). */
  sharesRows: boolean;
  /** Inserts `rows` in one batch, failing the test if the store refuses it; returns them. */
  insert: (store: RecordStore, ...rows: MessageRow[]) => Promise<MessageRow[]>;
  /** The stored row of `ref`; fails the test if there is none. */
  get: (store: RecordStore, ref: string) => Promise<MessageRow>;
}

/** The helpers for one store's run of the suite. */
export function recordSuiteContext(harness: RecordStoreSuiteHarness, options: RecordStoreSuiteOptions): RecordSuiteContext {
  const { describe, it } = harness;
  return {
    describe,
    sharesRows: options.sharesRows === true,
    test: (name, fn) => {
      // A function, not an arrow, for the runner's handles: vitest and node:test pass a
      // context as the first argument, mocha binds one to `this`. No declared parameter, so
      // that no runner takes the test for one that calls back `done`.
      it(name, async function (this: unknown) {
        const skip = runnerSkip(arguments[0], this);
        const store = await options.create();
        try {
          await store.ready?.();
          await fn(store, skip);
        } finally {
          try {
            await store.close?.();
          } finally {
            await options.destroy?.(store);
          }
        }
      });
    },
    insert: async (store, ...rows) => {
      const refusal = await store.insertMessages(rows);
      assert.equal(refusal, undefined, `an unguarded insert of new refs is never refused (rule: insertMessages returns a refusal only for a guard)`);
      return rows;
    },
    get: async (store, ref) => {
      const row = await store.getMessage(ref);
      assert.ok(row, `row ${ref} should be stored`);
      return row;
    },
  };
}
