/**
 * The no-leak assertion itself, and the router's answers when the inside fails loudly: a
 * storage error full of SQL, paths and a stack must reach the client as the bare 500.
 */
import { describe, expect, it } from 'vitest';
import { ERRORS, MemoryStorage } from '../../src/index.js';
import { KEY } from '../helpers/gateway.js';
import { assertNoLeak, leakProblem } from '../helpers/no-leak.js';
import { startFuzzGateway } from './harness.js';

const body = (details: unknown, code: unknown = 'VALIDATION_FAILED') => JSON.stringify({ details, code });

describe('leakProblem', () => {
  it('passes every details text of the error registry, and field-naming 422s', () => {
    for (const [code, { details, status }] of Object.entries(ERRORS)) expect(leakProblem(body(details, code), status)).toBeNull();
    for (const details of [
      'messages[3].recipient: must not start with "+": write digits in international format, country code first, no plus sign (e.g. 254712345678)',
      'messages: must have at most 1000 items',
      'messages[0].message: needs 11 SMS units, more than the limit of 10',
      'dlr_callback_url: must not point to a private, loopback or internal address',
      'Body is larger than 1048576 bytes',
    ]) {
      expect(leakProblem(body(details))).toBeNull();
    }
  });

  it('catches stack frames, file paths, SQL and exception text', () => {
    const leaks = [
      'Error: boom\n    at Object.<anonymous> (/app/dist/index.js:10:5)',
      'at async Promise.all (index 0)',
      'failed in /app/src/http/send.ts',
      'Cannot find /srv/node_modules/pg/lib/client.js',
      'index.js:42',
      'syntax error at or near "FROM"',
      'SELECT ref FROM sms_outbox.messages',
      'INSERT INTO messages failed',
      'SQLITE_BUSY: database is locked',
      'connect ECONNREFUSED 127.0.0.1:5432',
      'postgres connection terminated',
      "TypeError: Cannot read properties of undefined (reading 'id')",
      'Unexpected token } in JSON at position 12',
      'duplicate key value violates unique constraint "messages_pkey"',
    ];
    for (const details of leaks) expect(leakProblem(body(details)), details).not.toBeNull();
  });

  it('insists on exactly { details: non-empty string, code: a registry code of the status }', () => {
    const malformed = [
      '', 'oops', '[]', 'null', '{}', body(''), body(3), JSON.stringify({ error: 'x' }),
      JSON.stringify({ details: 'x' }),
      JSON.stringify({ details: 'x', code: 'VALIDATION_FAILED', stack: 'y' }),
      JSON.stringify({ code: 'VALIDATION_FAILED', details: 'x' }),
      body('x', 'NOT_A_CODE'), body('x', 3), body('x', 'toString'),
    ];
    for (const raw of malformed) expect(leakProblem(raw), raw).not.toBeNull();
    expect(leakProblem(body('Invalid API key', 'INVALID_API_KEY'), 422)).toMatch(/INVALID_API_KEY is a 401/);
    expect(() => assertNoLeak(body('Invalid API key', 'INVALID_API_KEY'), 401)).not.toThrow();
    expect(() => assertNoLeak(JSON.stringify({ details: 'at f (/src/a.ts:1:2)', code: 'VALIDATION_FAILED' }))).toThrow(/stack trace/);
  });
});

describe('answers when the inside fails loudly', () => {
  it('turns a storage error full of SQL, paths and a stack into the bare 500, storing nothing', async () => {
    const storage = new MemoryStorage();
    const failure = new Error('syntax error at or near "INSERT" in /app/node_modules/pg/lib/client.js:526:17 (SELECT 1)');
    storage.insertMessages = async () => {
      throw failure;
    };
    storage.getMessage = async () => {
      throw new TypeError("Cannot read properties of undefined (reading 'rows')");
    };
    const gateway = await startFuzzGateway({ storage });
    try {
      const sent = await gateway.send({
        method: 'POST',
        path: '/api/outbox/create',
        headers: { 'content-type': 'application/json', 'x-api-key': KEY },
        body: JSON.stringify({ profile_code: '12345', messages: [{ recipient: '254712345678', message: 'x' }] }),
      });
      expect([sent.status, sent.text]).toEqual([500, body('500 server-error', 'SERVER_ERROR')]);
      assertNoLeak(sent.text);
      const looked = await gateway.send({ method: 'GET', path: '/api/outbox/delivery-status/abc', headers: { 'x-api-key': KEY } });
      expect([looked.status, looked.text]).toEqual([500, body('500 server-error', 'SERVER_ERROR')]);
      expect(gateway.requestErrors).toEqual([failure, expect.any(TypeError)]);
    } finally {
      await gateway.close();
    }
  });
});
