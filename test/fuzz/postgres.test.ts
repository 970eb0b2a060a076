/**
 * The send and status endpoints fuzzed against the real PostgreSQL storage, where text
 * rules are stricter than in memory (no U+0000 in `text`, UTF-8 only): what a client sends
 * must still never reach the database as a 500.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresStorage } from '../../src/postgres.js';
import { dropSchema, freshSchema, makePool, postgresUnavailable } from '../e2e/postgres-service.js';
import { KEY } from '../helpers/gateway.js';
import { apiKey, externalIdQuery, mutatedBody, refSegment, type SendForm } from './arbitraries.js';
import { FUZZ_KEYS, sendAndCheck, startFuzzGateway, type FuzzGateway } from './harness.js';

const RUNS = Number(process.env.FUZZ_RUNS_SCALE ?? 1);
const unavailable = await postgresUnavailable('PostgreSQL fuzz tests');
const pool = makePool(4);
const schema = freshSchema('fuzz');
let gateway: FuzzGateway;

beforeAll(async () => {
  if (unavailable !== null) return;
  gateway = await startFuzzGateway({ storage: new PostgresStorage({ pool, schema }) });
});
afterAll(async () => {
  await gateway?.close();
  if (unavailable === null) await dropSchema(pool, schema);
  await pool.end();
});

const post = (path: string, body: unknown) =>
  sendAndCheck(gateway, {
    method: 'POST',
    path,
    headers: { 'content-type': 'application/json', 'x-api-key': KEY },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

describe.skipIf(unavailable !== null)('hostile input against PostgresStorage', () => {
  // Bugs found by fuzzing: PostgreSQL refuses U+0000 in text ("invalid byte sequence for
  // encoding UTF8: 0x00"), so a NUL in any stored or looked-up string was a 500.
  it('answers a U+0000 in any stored field or lookup without a 500', async () => {
    const item = { recipient: '254712345678', message: 'hi', external_id: 'x' };
    const refused: [unknown, string, string][] = [
      [{ profile_code: '12345', messages: [{ ...item, message: 'a\u0000b' }] }, 'messages[0].message: must not contain U+0000 (NUL)', 'VALIDATION_FAILED'],
      [{ profile_code: '12345', messages: [item, { ...item, external_id: 'a\u0000b' }] }, 'messages[1].external_id: must not contain U+0000 (NUL)', 'VALIDATION_FAILED'],
      [{ profile_code: '12345', messages: [{ ...item, external_id: 'a\ud800' }] }, 'messages[0].external_id: contains a lone UTF-16 surrogate', 'VALIDATION_FAILED'],
      [{ profile_code: '12345', messages: [item], dlr_callback_url: 'https://example.com/a\u0000b' }, 'dlr_callback_url: must not contain U+0000 (NUL)', 'VALIDATION_FAILED'],
      [{ profile_code: '12\u000045', messages: [item] }, 'Invalid Profile Code', 'INVALID_PROFILE'],
    ];
    for (const [body, details, code] of refused) {
      const answer = await post('/api/outbox/create', body);
      expect([answer.status, JSON.parse(answer.text)]).toEqual([422, { details, code }]);
    }
    const list = { profile_code: '22021501', to: ['254712345678'], message: 'hi', message_id: 'm\u0000' };
    expect(JSON.parse((await post('/api/outbox/premium', list)).text)).toEqual({ details: 'message_id: must not contain U+0000 (NUL)', code: 'VALIDATION_FAILED' });
    for (const path of ['/api/outbox/delivery-status/a%00b', '/api/outbox/delivery-status?external_id=a%00b']) {
      const answer = await sendAndCheck(gateway, { method: 'GET', path, headers: { 'x-api-key': KEY } });
      expect([200, 404]).toContain(answer.status);
      if (answer.status === 200) expect(answer.text).toBe('[]');
    }
  });

  it('answers mutated send bodies with a documented status and stores nothing unless 200', async () => {
    const formAndBody = fc.constantFrom<SendForm>('create', 'premium-list').chain((form) => fc.tuple(fc.constant(form), mutatedBody(form)));
    await fc.assert(
      fc.asyncProperty(formAndBody, apiKey(FUZZ_KEYS), async ([form, body], key) => {
        await sendAndCheck(gateway, {
          method: 'POST',
          path: form === 'create' ? '/api/outbox/create' : '/api/outbox/premium',
          headers: { 'content-type': 'application/json', 'x-api-key': key },
          body,
        });
      }),
      { numRuns: 150 * RUNS },
    );
  });

  it('answers hostile status lookups with a documented status', async () => {
    await fc.assert(
      fc.asyncProperty(refSegment, externalIdQuery, async (ref, query) => {
        await sendAndCheck(gateway, { method: 'GET', path: `/api/outbox/delivery-status/${ref}`, headers: { 'x-api-key': KEY } });
        await sendAndCheck(gateway, { method: 'GET', path: `/api/outbox/delivery-status?${query}`, headers: { 'x-api-key': KEY } });
      }),
      { numRuns: 150 * RUNS },
    );
  });
});
