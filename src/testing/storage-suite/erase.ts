/**
 * The storage contract suite's tests of one topic: erasing one subscriber (`sms.erase`, the
 * optional `EraseStorage` methods; docs/erase.md). Every message to the number, of every
 * principal, is erased in bounded steps that end with `next: null`: the number becomes
 * `[erased]` with `recipientSha256`, the text `[redacted]` with `textSha256`; a message not
 * yet sent is ended `cancelled` in the same step; other numbers are untouched. The report
 * log's copies, the idempotency answers and inbound messages are erased too. Each method is
 * optional: its test is skipped without it.
 */
import assert from 'node:assert/strict';
import { hash } from 'node:crypto';
import { ERASED_NUMBER } from '../../lifecycle/erase-record.js';
import { REDACTED_TEXT } from '../../lifecycle/retain-text.js';
import type { IdempotencyCursor, Storage } from '../../storage/contract.js';
import type { SuiteContext } from './context.js';
import { buildNewMessage, DELIVERED, T0 } from './fixtures.js';

const NUMBER = '254711000222';
const sha256 = (text: string): string => hash('sha256', text, 'hex');
const ERASE = `(rule: an erased record has recipient "${ERASED_NUMBER}", recipientSha256 the SHA-256 of the number, text "${REDACTED_TEXT}" and textSha256 the SHA-256 of the text)`;

/** Runs `storage.eraseMessages` for `NUMBER` in steps of `limit` until `next` is `null`; the refs erased and the transitions, in order. */
async function eraseAll(storage: Storage, limit: number): Promise<{ refs: string[]; cancelled: string[] }> {
  const refs: string[] = [];
  const cancelled: string[] = [];
  let after: string | null = null;
  for (let step = 0; step < 100; step++) {
    const page = await storage.eraseMessages!(NUMBER, after, limit, T0 + 500);
    assert.ok(page.erased <= limit, `a step erases at most its limit (rule: eraseMessages is bounded by limit)`);
    refs.push(...page.refs);
    cancelled.push(...page.transitions.map((transition) => transition.message.ref));
    if (page.next === null) return { refs, cancelled };
    after = page.next;
  }
  assert.fail('eraseMessages never answered next: null (rule: steps from the next cursor reach the end)');
}

/** Registers the tests of this topic (see the module comment). */
export function eraseTests({ describe, test, get, submitAll }: SuiteContext): void {
  describe('erase', () => {
    test('eraseMessages: every message to the number, of every principal, in bounded steps; unsent ones are cancelled', async (storage, skip) => {
      if (storage.eraseMessages === undefined) {
        skip('the storage has no eraseMessages');
        return;
      }
      const delivered = buildNewMessage({ recipient: NUMBER, text: 'Code 111111', principalId: 'principal-a' });
      const queued = buildNewMessage({ recipient: NUMBER, text: 'Code 222222', principalId: 'principal-a' });
      const others = [1, 2, 3].map((i) => buildNewMessage({ recipient: NUMBER, text: `Other ${i}`, principalId: 'principal-b' }));
      const kept = buildNewMessage({ recipient: '254799000111', text: 'Kept', principalId: 'principal-a' });
      await storage.insertMessages([delivered, queued, kept]);
      await storage.insertMessages(others);
      await submitAll(storage, delivered);
      await storage.finish(delivered.ref, DELIVERED, T0 + 100);
      const { refs, cancelled } = await eraseAll(storage, 2);
      assert.deepEqual([...refs].sort(), [delivered, queued, ...others].map((m) => m.ref).sort(), 'every message to the number is erased once');
      assert.deepEqual(cancelled.sort(), [queued, ...others].map((m) => m.ref).sort(), 'the messages not yet sent are ended, with a transition each');
      for (const message of [delivered, queued, ...others]) {
        const record = await get(storage, message);
        assert.equal(record.recipient, ERASED_NUMBER, ERASE);
        assert.equal(record.recipientSha256, sha256(NUMBER), ERASE);
        assert.equal(record.text, REDACTED_TEXT, ERASE);
        assert.equal(record.textSha256, sha256(message.text), ERASE);
      }
      assert.equal((await get(storage, delivered)).state, 'delivered', 'a message already ended keeps its state');
      assert.equal((await get(storage, queued)).state, 'cancelled', 'a message not yet sent is ended cancelled');
      assert.equal((await get(storage, kept)).recipient, kept.recipient, 'another number is untouched');
      assert.equal((await get(storage, kept)).state, 'queued');
      if (storage.listMessages !== undefined) {
        const page = await storage.listMessages({ principalId: 'principal-b', recipient: NUMBER, limit: 10 });
        assert.deepEqual(page.messages, [], 'the list by recipient no longer finds an erased message');
      }
      assert.deepEqual((await eraseAll(storage, 2)).refs, [], 'a second erase finds nothing');
    });

    test('eraseMessages and eraseIdempotency: the pulled report (the message itself) and the answers kept under a key', async (storage, skip) => {
      if (storage.eraseMessages === undefined || storage.readReports === undefined) {
        skip('the storage has no eraseMessages or readReports');
        return;
      }
      const message = buildNewMessage({ recipient: NUMBER, text: 'Code 333333' });
      const body = JSON.stringify([{ external_id: 'ext-1', recipient: NUMBER, sms_count: 1, message_ref: message.ref }]);
      const keyed = storage.findIdempotency !== undefined;
      const record = { principalId: message.principalId, key: 'erase-key', bodyHash: 'h'.repeat(64), status: 200, body, createdAt: T0, expiresAt: T0 + 86_400_000 };
      await storage.insertMessages([message], undefined, keyed ? record : undefined);
      await submitAll(storage, message);
      await storage.finish(message.ref, DELIVERED, T0 + 100);
      const { refs } = await eraseAll(storage, 10);
      const [report] = await storage.readReports(message.principalId, null, 10);
      assert.equal(report?.message.ref, message.ref, 'the ended message is still reported');
      assert.equal(report?.message.recipient, ERASED_NUMBER, `the pulled report ${ERASE}`);
      assert.equal(report?.message.text, REDACTED_TEXT, `the pulled report ${ERASE}`);
      if (!keyed || storage.eraseIdempotency === undefined) return;
      let cursor: IdempotencyCursor | null = null;
      let answers = 0;
      do {
        const page = await storage.eraseIdempotency(new Set(refs), cursor, 1);
        answers += page.erased;
        cursor = page.next;
      } while (cursor !== null);
      assert.equal(answers, 1);
      const kept = await storage.findIdempotency!(message.principalId, 'erase-key', T0 + 1);
      assert.ok(kept !== null && !kept.body.includes(NUMBER) && kept.body.includes(ERASED_NUMBER), 'the answer kept under the key lists the message with the marker');
    });

    test('eraseInbound: the messages from the number', async (storage, skip) => {
      if (storage.eraseInbound === undefined || storage.insertInbound === undefined || storage.listInbound === undefined) {
        skip('the storage has no eraseInbound');
        return;
      }
      const inbound = (ref: string, from: string) => ({
        ref, principalId: 'principal-a', profileCode: 'PROFILE1', from, to: '12345', text: `Hi from ${from}`, receivedAt: T0, callbackUrl: null, callbackSecret: null, uid: null,
      });
      await storage.insertInbound(inbound('mo-1', NUMBER));
      await storage.insertInbound(inbound('mo-2', NUMBER));
      await storage.insertInbound(inbound('mo-3', '254799000111'));
      assert.equal(await storage.eraseInbound(NUMBER, 1), 1, 'a step erases at most its limit');
      assert.equal(await storage.eraseInbound(NUMBER, 10), 1);
      assert.equal(await storage.eraseInbound(NUMBER, 10), 0, 'none is left');
      const listed = await storage.listInbound({ limit: 10 });
      const byRef = new Map(listed.map((record) => [record.ref, record]));
      for (const ref of ['mo-1', 'mo-2']) {
        assert.equal(byRef.get(ref)?.from, ERASED_NUMBER, 'an erased inbound message has from "[erased]"');
        assert.equal(byRef.get(ref)?.text, REDACTED_TEXT, 'and text "[redacted]"');
      }
      assert.equal(byRef.get('mo-3')?.from, '254799000111', 'another number is untouched');
    });
  });
}
