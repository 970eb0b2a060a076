/**
 * The storage contract suite's tests of one topic: texts that do not outlive their use
 * (`NewMessage.retainText`). `until-final` is redacted in the step that ends the message (a
 * receipt, `finish`, a sweep), `days:N` by `redactTexts` once N days have passed and the
 * message has ended (or in the step that ends it, when that is later): the text becomes
 * `[redacted]`, `textSha256` its SHA-256, and the parts, counts and state stay. Messages
 * without a policy keep their text. `redactTexts` is optional: its test is skipped without it.
 */
import assert from 'node:assert/strict';
import { hash } from 'node:crypto';
import { REDACTED_TEXT } from '../../lifecycle/retain-text.js';
import type { MessageRecord, Storage } from '../../storage/contract.js';
import type { SuiteContext } from './context.js';
import { buildNewMessage, DELIVERED, receipt, T0 } from './fixtures.js';

const DAY = 86_400_000;
const sha256 = (text: string): string => hash('sha256', text, 'hex');

const REDACT = '(rule: a redacted record has text "[redacted]" and textSha256 the SHA-256 of the text it had; its parts, sms_count and state stay)';

/** Asserts `record` redacted from `text`, its parts and count as `before`'s. */
function assertRedacted(record: MessageRecord, text: string, before: MessageRecord, why: string): void {
  assert.equal(record.text, REDACTED_TEXT, `${why} ${REDACT}`);
  assert.equal(record.textSha256, sha256(text), `${why} ${REDACT}`);
  assert.equal(record.smsCount, before.smsCount, REDACT);
  assert.equal(record.parts.length, before.parts.length, REDACT);
}

/** Registers the tests of this topic (see the module comment). */
export function retainTextTests({ describe, test, get, submitAll }: SuiteContext): void {
  describe('retainText', () => {
    test('until-final: the text is redacted in the step that ends the message, by a receipt or by finish', async (storage) => {
      const byReceipt = buildNewMessage({ text: 'Your code is 123456', retainText: 'until-final', smsCount: 2 });
      const byFinish = buildNewMessage({ text: 'Your code is 654321', retainText: 'until-final' });
      const kept = buildNewMessage({ text: 'Kept' });
      await storage.insertMessages([byReceipt, byFinish, kept]);
      const ids = await submitAll(storage, byReceipt);
      assert.equal((await get(storage, byReceipt)).text, byReceipt.text, 'a message not yet ended keeps its text');
      await storage.applyReceipt(receipt(ids[0]!, DELIVERED));
      assert.equal((await get(storage, byReceipt)).text, byReceipt.text, 'one part of two delivered: not ended, kept');
      const ended = await storage.applyReceipt(receipt(ids[1]!, DELIVERED));
      assert.equal(ended.kind, 'terminal');
      if (ended.kind === 'terminal') assert.equal(ended.transition.message.text, REDACTED_TEXT, `the transition's message is the record as written ${REDACT}`);
      const delivered = await get(storage, byReceipt);
      assert.equal(delivered.state, 'delivered');
      assertRedacted(delivered, byReceipt.text, delivered, 'ended by its last receipt');
      assert.equal(delivered.parts.filter((part) => part.outcome !== null).length, 2);
      await storage.finish(byFinish.ref, DELIVERED, T0 + 50);
      assertRedacted(await get(storage, byFinish), byFinish.text, await get(storage, byFinish), 'ended by finish');
      await storage.finish(kept.ref, DELIVERED, T0 + 50);
      const keptRecord = await get(storage, kept);
      assert.equal(keptRecord.text, 'Kept', 'a message without retainText keeps its text');
      assert.ok(keptRecord.textSha256 === undefined || keptRecord.textSha256 === null);
    });

    test('days:N: redactTexts redacts an ended message once N days have passed since acceptance, once; it is still purged after', async (storage, skip) => {
      if (storage.redactTexts === undefined) {
        skip('the storage has no redactTexts');
        return;
      }
      const late = buildNewMessage({ text: 'Statement ready', retainText: 'days:2' });
      const live = buildNewMessage({ text: 'Still queued', retainText: 'days:2' });
      await storage.insertMessages([late, live]);
      await storage.finish(late.ref, DELIVERED, T0 + 10);
      assert.equal(await storage.redactTexts(T0 + 2 * DAY - 1, 10), 0, 'before N days nothing is redacted');
      assert.equal((await get(storage, late)).text, late.text);
      assert.equal(await storage.redactTexts(T0 + 2 * DAY, 10), 1, 'at N days the ended message is redacted; a message not yet ended waits (its text is still to be sent)');
      const redacted = await get(storage, late);
      assertRedacted(redacted, late.text, redacted, 'swept');
      assert.equal(redacted.updatedAt, T0 + 10, 'a redaction is no change of the message: updatedAt stays');
      assert.equal((await get(storage, live)).text, live.text);
      assert.equal(await storage.redactTexts(T0 + 3 * DAY, 10), 0, 'redacted once');
      assert.equal(await storage.purge(T0 + 11, 10), 1, 'the redacted message is purged by its updatedAt as any other');
    });

    test('days:N: a message that ends after its N days is redacted in the step that ends it', async (storage: Storage) => {
      const message = buildNewMessage({ text: 'Old news', retainText: 'days:1' });
      await storage.insertMessages([message]);
      const ids = await submitAll(storage, message);
      await storage.applyReceipt(receipt(ids[0]!, DELIVERED, T0 + DAY + 5));
      const ended = await get(storage, message);
      assertRedacted(ended, message.text, ended, 'ended past its N days');
    });
  });
}
