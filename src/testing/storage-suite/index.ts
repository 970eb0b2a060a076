/**
 * The storage contract suite: every `Storage` adapter, the bundled ones and a host's
 * own, runs it to show it keeps the promises of the `Storage` contract
 * (https://github.com/sms-outbox/sms-outbox/blob/main/docs/storage-contract.md), and
 * a failing case's message names the rule it found broken. Runner-agnostic:
 * the caller passes its runner's `describe` and `it`; assertions use `node:assert/strict`.
 * This entry registers the topics in order; each topic's tests are in a file of their own.
 *
 * @module
 */
import { callbackTests } from './callbacks.js';
import { callbackRecoveryTests } from './callback-recovery.js';
import { inboundRecoveryTests } from './inbound-recovery.js';
import { claimTests } from './claims.js';
import { counterTests } from './counters.js';
import { creditTests } from './credit.js';
import { suiteContext, type StorageSuiteHarness, type StorageSuiteOptions } from './context.js';
import { endingTests } from './endings.js';
import { eraseTests } from './erase.js';
import { fairnessTests } from './fairness.js';
import { idempotencyTests } from './idempotency.js';
import { inboundTests } from './inbound.js';
import { keyTests } from './keys.js';
import { listTests } from './list.js';
import { reportLogTests } from './report-log.js';
import { messageTests } from './messages.js';
import { queueCountTests } from './queue-count.js';
import { receiptTests } from './receipts.js';
import { retainTextTests } from './retain-text.js';
import { retentionTests } from './retention.js';
import { submissionTests } from './submissions.js';
import { timedTests } from './timed.js';
import { updatedAtTests } from './updated-at.js';

export { buildNewMessage } from './fixtures.js';
export type { StorageSuiteHarness, StorageSuiteOptions } from './context.js';

/**
 * Registers the contract tests for one adapter with the given runner.
 *
 * Each test gets its own storage from `options.create`, calls `ready()`, and afterwards
 * `close()` and `options.destroy`. Times are fixed epoch-ms values passed in; the suite
 * never waits on the clock. A failing case's message says the rule it found broken (`rule:
 * ...`). The fair claim order is checked as properties (transactional before bulk,
 * acceptance order within a principal, turns, weights within a bound), so any fair order
 * passes; race cases repeat their race 50 times, so an adapter that loses a race now and
 * then fails every run. Optional groups the storage lacks are skipped, saying why.
 */
export function runStorageContract(harness: StorageSuiteHarness, options: StorageSuiteOptions): void {
  const context = suiteContext(harness, options);
  harness.describe(`storage contract: ${options.name}`, () => {
    messageTests(context);
    claimTests(context);
    fairnessTests(context);
    queueCountTests(context);
    listTests(context);
    reportLogTests(context);
    submissionTests(context);
    endingTests(context);
    receiptTests(context);
    callbackTests(context);
    callbackRecoveryTests(context);
    retentionTests(context);
    retainTextTests(context);
    eraseTests(context);
    idempotencyTests(context);
    creditTests(context);
    counterTests(context);
    inboundTests(context);
    inboundRecoveryTests(context);
    timedTests(context);
    keyTests(context);
    updatedAtTests(context);
  });
}
