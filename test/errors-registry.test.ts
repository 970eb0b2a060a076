import { readFileSync } from 'node:fs';
import express from 'express';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import {
  createSmsRouter,
  ERRORS,
  EVENT_ERRORS,
  EventError,
  MemoryStorage,
  OPTION_ERRORS,
  OptionError,
  staticKeys,
  type ErrorEvent,
} from '../src/index.js';

describe('the error registry', () => {
  it('is documented in the README table, code by code, with its status and details', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const rows = new Map<string, { status: number; text: string }>();
    for (const match of readme.matchAll(/^\| (\d{3}) \| `([A-Z_]+)` \| (.*) \|$/gm)) {
      rows.set(match[2]!, { status: Number(match[1]), text: match[3]! });
    }
    expect([...rows.keys()].sort()).toEqual(Object.keys(ERRORS).sort());
    for (const [code, entry] of Object.entries(ERRORS)) {
      const row = rows.get(code)!;
      expect(row.status, code).toBe(entry.status);
      // Fixed texts are quoted verbatim; dynamic ones (validation, sizes) are described.
      if (!['VALIDATION_FAILED', 'BODY_TOO_LARGE', 'SCOPE_DENIED', 'RATE_LIMITED', 'SERVER_ERROR', 'QUEUE_FULL', 'BACKLOG_FULL'].includes(code)) {
        expect(row.text, code).toContain(`\`${entry.details}\``);
      }
    }
  });
});

describe('the option and error-event codes', () => {
  const docs = readFileSync(new URL('../docs/errors.md', import.meta.url), 'utf8');
  const documented = (after: string): Map<string, string> => {
    const section = docs.slice(docs.indexOf(after));
    const table = section.slice(0, section.indexOf('\n\n', section.indexOf('| code |')));
    return new Map([...table.matchAll(/^\| `([A-Z_]+)` \| (.*) \|$/gm)].map((m) => [m[1]!, m[2]!]));
  };

  it('are documented in docs/errors.md, code by code', () => {
    expect([...documented('`OPTION_ERRORS`').keys()].sort()).toEqual(Object.keys(OPTION_ERRORS).sort());
    expect([...documented('`EVENT_ERRORS`').keys()].sort()).toEqual(Object.keys(EVENT_ERRORS).sort());
  });

  it('mark a bad option at construction with a code a host can match', () => {
    const verifyKey = staticKeys([{ key: 'k', id: 'acme', profiles: ['12345'] }]);
    const codeOf = (make: () => unknown): unknown => {
      try {
        make();
      } catch (error) {
        expect(error).toBeInstanceOf(TypeError);
        expect(error).toBeInstanceOf(OptionError);
        return (error as OptionError).code;
      }
      throw new Error('did not throw');
    };
    expect(codeOf(() => createSmsRouter({ verifyKey, limits: { maxSegment: 3 } } as never))).toBe('UNKNOWN_OPTION');
    expect(codeOf(() => createSmsRouter({ verifyKey, limits: { maxSegments: 0 } }))).toBe('INVALID_OPTION');
    expect(codeOf(() => createSmsRouter({ verifyKey, storage: MemoryStorage as never }))).toBe('INVALID_ADAPTER');
    expect(codeOf(() => staticKeys([{ key: 'k', id: 'a', scopes: ['quik' as never] }]))).toBe('INVALID_OPTION');
  });

  it('mark every error event with a code: the router’s own, or its source’s', async () => {
    const storage = new MemoryStorage();
    storage.getMessage = async () => {
      throw new Error('database down');
    };
    const sms = createSmsRouter({
      verifyKey: (key) => (key === 'odd' ? ('acme' as never) : key === 'k' ? { id: 'acme', profiles: ['12345'] } : null),
      storage,
      rateLimit: false,
    });
    const events: ErrorEvent[] = [];
    sms.on('error', (event) => events.push(event));
    sms.on('message.accepted', () => {
      throw new Error('listener bug');
    });
    const app = express().use(sms);
    await request(app).get('/api/outbox/delivery-status/0193a0c4-7b1e-7cc0-8000-000000000000').set('X-API-Key', 'k').expect(500);
    await request(app).get('/api/outbox/delivery-status/0193a0c4-7b1e-7cc0-8000-000000000000').set('X-API-Key', 'odd').expect(500);
    await request(app)
      .post('/api/outbox/create')
      .set('X-API-Key', 'k')
      .send({ profile_code: '12345', messages: [{ recipient: '254712345678', message: 'hi' }] })
      .expect(200);
    await sms.close();
    expect(events.map((e) => [e.source, e.code])).toEqual([
      ['request', 'REQUEST_FAILED'],
      ['request', 'VERIFY_KEY_RESULT'],
      ['listener', 'LISTENER_FAILED'],
    ]);
    expect(events[1]!.error).toBeInstanceOf(EventError);
    // A foreign error stays as it was thrown.
    expect((events[0]!.error as Error).message).toBe('database down');
  });
});
