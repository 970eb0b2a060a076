/**
 * Property tests of the status endpoints: any `message_ref` path segment (malformed
 * percent-escapes included) and any `external_id` query answer a documented status with a
 * clean body, and only the caller's own messages are ever shown.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEY, OTHER_KEY } from '../helpers/gateway.js';
import { apiKey, externalIdQuery, refSegment } from './arbitraries.js';
import { FUZZ_KEYS, sendAndCheck, startFuzzGateway, type FuzzGateway } from './harness.js';

const RUNS = Number(process.env.FUZZ_RUNS_SCALE ?? 1);

let gateway: FuzzGateway;
let ownRef = '';

beforeAll(async () => {
  gateway = await startFuzzGateway();
  const sent = await gateway.send({
    method: 'POST',
    path: '/api/outbox/create',
    headers: { 'content-type': 'application/json', 'x-api-key': KEY },
    body: JSON.stringify({ profile_code: '12345', messages: [{ recipient: '254712345678', message: 'hi', external_id: 'fuzz-ext' }] }),
  });
  ownRef = (JSON.parse(sent.text) as { message_ref: string }[])[0]!.message_ref;
});
afterAll(async () => {
  await gateway?.close();
});

describe('status endpoints under hostile paths and queries', () => {
  it('answers any message_ref segment with 200 (own message only), 401, 403, 404 or 429', async () => {
    const segment = fc.oneof({ weight: 6, arbitrary: refSegment }, { weight: 1, arbitrary: fc.constant('OWN') });
    await fc.assert(
      fc.asyncProperty(segment, apiKey(FUZZ_KEYS), async (seg, key) => {
        const ref = seg === 'OWN' ? ownRef : seg;
        const answer = await sendAndCheck(gateway, { method: 'GET', path: `/api/outbox/delivery-status/${ref}`, headers: { 'x-api-key': key } });
        if (answer.status === 200) {
          // HTTP drops whitespace around a header value, so " key " is the key.
          expect(key?.trim()).toBe(KEY);
          expect((JSON.parse(answer.text) as { message_ref: string }).message_ref).toBe(ownRef);
        }
      }),
      { numRuns: 600 * RUNS },
    );
  });

  it('answers any external_id query with 200 (own messages only), 401, 403, 422 or 429', async () => {
    await fc.assert(
      fc.asyncProperty(externalIdQuery, apiKey(FUZZ_KEYS), async (query, key) => {
        const answer = await sendAndCheck(gateway, { method: 'GET', path: `/api/outbox/delivery-status?${query}`, headers: { 'x-api-key': key } });
        if (answer.status === 200) {
          const found = JSON.parse(answer.text) as { message_ref: string }[];
          expect(Array.isArray(found)).toBe(true);
          for (const message of found) {
            expect(key?.trim()).toBe(KEY);
            expect(message.message_ref).toBe(ownRef);
          }
        }
      }),
      { numRuns: 500 * RUNS },
    );
  });

  it('never shows one key the messages of another', async () => {
    const answer = await sendAndCheck(gateway, { method: 'GET', path: `/api/outbox/delivery-status/${ownRef}`, headers: { 'x-api-key': OTHER_KEY } });
    expect(answer.status).toBe(404);
  });

  // A bug found by fuzzing: Express could not decode the path parameter and the router
  // answered its URIError with "500 server-error".
  it('answers a message_ref with a malformed percent-escape without a 500', async () => {
    for (const ref of ['%', '%E0%A4%A', '%zz', 'a%']) {
      for (const key of [KEY, undefined]) {
        const answer = await sendAndCheck(gateway, { method: 'GET', path: `/api/outbox/delivery-status/${ref}`, headers: { 'x-api-key': key } });
        expect([answer.status, JSON.parse(answer.text)]).toEqual([404, { details: 'Message not found', code: 'NOT_FOUND' }]);
      }
    }
  });
});
