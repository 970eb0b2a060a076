/**
 * Errors are not silent by default: with no `logger` and no `error`
 * listener, each error is written to stderr, one line, at most 10 a minute; a listener
 * (added at any time) or a logger takes them over.
 */
import request from 'supertest';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { MemoryStorage, type SmsLogger, type SmsRouterOptions } from '../../src/index.js';
import { createGateway, KEY, type TestGateway } from '../helpers/gateway.js';

/** A storage whose status lookups fail, as a database that went away would. */
class BrokenLookups extends MemoryStorage {
  override async getMessage(): Promise<never> {
    throw new Error('connection terminated\n    at Socket.<anonymous>');
  }
}

const REF = '019abc12-3456-7def-8123-456789abcdef';
let gateway: TestGateway | undefined;
/** What the router wrote to stderr, line by line (other writers' lines left out). */
let stderr: string[];
let clock: number;

beforeEach(() => {
  stderr = [];
  clock = Date.parse('2025-01-01T00:00:00Z');
  const write = process.stderr.write.bind(process.stderr);
  vi.spyOn(process.stderr, 'write').mockImplementation(((chunk: string | Uint8Array, ...rest: never[]) => {
    const text = chunk.toString();
    if (!text.startsWith('sms-outbox')) return write(chunk, ...rest);
    stderr.push(...text.split('\n').filter((line) => line !== ''));
    return true;
  }) as typeof process.stderr.write);
});

afterEach(async () => {
  vi.restoreAllMocks();
  await gateway?.sms.close();
  gateway = undefined;
});

function start(options: Partial<SmsRouterOptions> = {}): TestGateway {
  gateway = createGateway({ storage: new BrokenLookups(), rateLimit: false, now: () => clock, ...options });
  return gateway;
}

async function failedLookup(): Promise<void> {
  const res = await request(gateway!.app).get(`/api/outbox/delivery-status/${REF}`).set('X-API-Key', KEY);
  expect(res.status).toBe(500);
}

describe('where errors go', () => {
  it('are written to stderr, one line each with source and message; with a logger, to it alone', async () => {
    start();
    await failedLookup();
    expect(stderr).toEqual(['sms-outbox error [request]: Error: connection terminated at Socket.<anonymous>']);
    await gateway!.sms.close();

    const logged: string[] = [];
    const logger: SmsLogger = { info: () => {}, warn: () => {}, error: (_obj, msg) => logged.push(msg) };
    start({ logger });
    await failedLookup();
    expect(logged).toEqual(['sms-outbox request error']);
    expect(stderr).toHaveLength(1);
  });

  it('are rate-limited: 10 lines a minute, one notice, then the count of those left out', async () => {
    start();
    for (let i = 0; i < 25; i++) await failedLookup();
    expect(stderr).toHaveLength(11);
    expect(stderr.slice(0, 10).every((line) => line.startsWith('sms-outbox error [request]: '))).toBe(true);
    expect(stderr[10]).toBe(
      'sms-outbox: more than 10 errors in 60 s; the next are counted, not written, until 2025-01-01T00:01:00.000Z. ' +
        'Listen to `error` or pass a `logger` to get every one',
    );

    clock += 60_000;
    await failedLookup();
    expect(stderr.slice(11)).toEqual([
      'sms-outbox: 15 more errors were not written',
      'sms-outbox error [request]: Error: connection terminated at Socket.<anonymous>',
    ]);
  });

  it('stop going to stderr once an `error` listener is added, even after construction', async () => {
    start();
    await failedLookup();
    expect(stderr).toHaveLength(1);
    const heard: unknown[] = [];
    gateway!.sms.on('error', (e) => heard.push(e.error));
    await failedLookup();
    expect(heard).toHaveLength(1);
    expect(stderr).toHaveLength(1);
  });
});
