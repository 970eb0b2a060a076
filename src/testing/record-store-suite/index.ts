/**
 * The record-store contract suite: a `RecordStore` (src/storage/record-store.ts), the
 * primitives a storage offers when the library makes every decision, runs it to show it
 * keeps every promise of that contract; a failing case's message names the primitive and
 * the rule it found broken (`rule: ...`), so that whoever writes a record store for their
 * own database learns which primitive to fix. Runner-agnostic: the caller passes its
 * runner's `describe` and `it`; assertions use `node:assert/strict`. This entry registers
 * the topics in order; each topic's tests are in a file of their own.
 *
 * @module
 */
import { createLedger } from '../../ledger/index.js';
import type { Storage } from '../../storage/contract.js';
import type { RecordStore } from '../../storage/record-store.js';
import { runStorageContract } from '../storage-suite/index.js';
import { claimTests } from './claims.js';
import { recordSuiteContext, type RecordStoreSuiteHarness, type RecordStoreSuiteOptions } from './context.js';
import { counterTests } from './counters.js';
import { eraseTests } from './erase.js';
import { creditTests } from './credit.js';
import { idempotencyTests } from './idempotency.js';
import { insertTests } from './inserts.js';
import { keyTests } from './keys.js';
import { lookupTests } from './lookups.js';
import { queueTests } from './queue.js';
import { reportTests } from './reports.js';
import { roundTripTests } from './round-trip.js';
import { timerTests } from './timers.js';
import { writeTests } from './writes.js';

export { buildMessageRow } from './fixtures.js';
export type { MessageRowOverrides } from './fixtures.js';
export type { RecordStoreSuiteHarness, RecordStoreSuiteOptions } from './context.js';

/**
 * Registers the record-store contract tests for one store with the given runner.
 *
 * Each test gets its own store from `options.create`, calls `ready()`, and afterwards
 * `close()` and `options.destroy`. Times are fixed epoch-ms values passed in; the suite
 * never waits on the clock. Race cases repeat their race 50 times, so a store that loses a
 * race now and then fails every run. The optional `countQueued` is skipped, saying why, when
 * the store lacks it. Then, unless `throughLedger` is `false`, the full `Storage` contract
 * suite runs over the library's ledger on stores made the same way.
 */
export function runRecordStoreContract(harness: RecordStoreSuiteHarness, options: RecordStoreSuiteOptions): void {
  const context = recordSuiteContext(harness, options);
  harness.describe(`record store contract: ${options.name}`, () => {
    insertTests(context);
    roundTripTests(context);
    keyTests(context);
    lookupTests(context);
    claimTests(context);
    reportTests(context);
    timerTests(context);
    queueTests(context);
    writeTests(context);
    idempotencyTests(context);
    creditTests(context);
    counterTests(context);
    eraseTests(context);
  });
  if (options.throughLedger === false) return;
  const storeOf = new WeakMap<Storage, RecordStore>();
  runStorageContract(harness, {
    name: `the ledger over ${options.name}`,
    create: async () => {
      const store = await options.create();
      const ledger = createLedger(store);
      storeOf.set(ledger, store);
      return ledger;
    },
    destroy: async (ledger) => {
      const store = storeOf.get(ledger);
      if (store !== undefined) await options.destroy?.(store);
    },
  });
}
