/**
 * Hostile requests at the HTTP level, written byte by byte on raw TCP sockets: duplicated
 * and oversized headers, bodies shorter or longer than `Content-Length`, chunked and
 * compressed bodies, gzip bombs. What Node's own HTTP parser refuses (400 with no body,
 * 431 for headers over `--max-http-header-size`) never reaches the router; everything else
 * must get a documented status with a clean `{ "details", "code" }`.
 */
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertNoLeak } from '../helpers/no-leak.js';
import { KEY } from '../helpers/gateway.js';
import { apiKey, contentType, mutatedBody } from './arbitraries.js';
import { DOCUMENTED_STATUSES, FUZZ_KEYS, FUZZ_MAX_BODY_BYTES, rawExchange, startFuzzGateway, type FuzzGateway, type RawResponse } from './harness.js';

const RUNS = Number(process.env.FUZZ_RUNS_SCALE ?? 1);
const VALID = JSON.stringify({ profile_code: '12345', messages: [{ recipient: '254712345678', message: 'wire', external_id: 'w' }] });

let gateway: FuzzGateway;
beforeAll(async () => {
  gateway = await startFuzzGateway();
});
afterAll(async () => {
  await gateway?.close();
});

/** How the body's length relates to the headers. */
type Framing = 'exact' | 'short' | 'long' | 'chunked' | 'bad-chunked' | 'none' | 'both';
type Encoding = 'identity' | 'gzip' | 'gzip-corrupt' | 'gzip-bomb' | 'compress';

interface WireCase {
  headerLines: string[];
  body: Buffer;
  framing: Framing;
}

/** 16 MiB of spaces inside a valid body, in about 16 KiB: the limit must apply to the inflated size. */
const BOMB = gzipSync(Buffer.concat([Buffer.from(VALID.slice(0, -1)), Buffer.alloc(16 * 1024 * 1024, 0x20), Buffer.from('}')]));

function encode(body: string, encoding: Encoding): { bytes: Buffer; header: string | null } {
  switch (encoding) {
    case 'identity':
      return { bytes: Buffer.from(body, 'utf8'), header: null };
    case 'gzip':
      return { bytes: gzipSync(body), header: 'gzip' };
    case 'gzip-corrupt': {
      const bytes = gzipSync(body);
      const middle = Math.floor(bytes.length / 2);
      bytes[middle] = bytes[middle]! ^ 0xff;
      return { bytes: bytes.subarray(0, bytes.length - 3), header: 'gzip' };
    }
    case 'gzip-bomb':
      return { bytes: BOMB, header: 'gzip' };
    case 'compress':
      return { bytes: Buffer.from(body), header: 'compress' };
  }
}

function build(c: WireCase): Buffer {
  const head = Buffer.from(`POST /api/outbox/create HTTP/1.1\r\nHost: 127.0.0.1\r\n${c.headerLines.map((l) => `${l}\r\n`).join('')}`, 'latin1');
  const n = c.body.length;
  switch (c.framing) {
    case 'exact':
      return Buffer.concat([head, Buffer.from(`Content-Length: ${n}\r\n\r\n`), c.body]);
    case 'short':
      return Buffer.concat([head, Buffer.from(`Content-Length: ${n + 10}\r\n\r\n`), c.body]);
    case 'long':
      return Buffer.concat([head, Buffer.from(`Content-Length: ${Math.max(0, n - 5)}\r\n\r\n`), c.body]);
    case 'chunked':
      return Buffer.concat([head, Buffer.from(`Transfer-Encoding: chunked\r\n\r\n${n.toString(16)}\r\n`), c.body, Buffer.from('\r\n0\r\n\r\n')]);
    case 'bad-chunked':
      return Buffer.concat([head, Buffer.from(`Transfer-Encoding: chunked\r\n\r\nzz\r\n`), c.body, Buffer.from('\r\n0\r\n\r\n')]);
    case 'none':
      return Buffer.concat([head, Buffer.from('\r\n')]);
    case 'both':
      return Buffer.concat([head, Buffer.from(`Content-Length: ${n}\r\nTransfer-Encoding: chunked\r\n\r\n`), c.body]);
  }
}

/** A response Node's parser wrote itself: 400 or 431 with no body, before any router code. */
const fromNodeParser = (r: RawResponse) => (r.status === 400 || r.status === 431) && r.body === '' && r.headers['content-type'] === undefined;

function checkResponses(responses: RawResponse[], insertsBefore: number, expectAnswer: boolean): void {
  if (expectAnswer && responses.length === 0) throw new Error('no answer');
  for (const r of responses) {
    if (fromNodeParser(r)) continue;
    if (!DOCUMENTED_STATUSES.has(r.status)) throw new Error(`undocumented status ${r.status}: ${r.body}`);
    if (r.status !== 200) {
      assertNoLeak(r.body, r.status);
    }
  }
  const answered200 = responses.some((r) => r.status === 200);
  if (!answered200 && gateway.inserts.length !== insertsBefore) throw new Error('a refused request stored something');
  if (gateway.requestErrors.length > 0) throw new Error(`a request caused an error event: ${String(gateway.requestErrors[0])}`);
}

describe('hostile HTTP framing and headers', () => {
  it('answers any mix of header variants, framings and encodings without a 5xx or a leak', async () => {
    const keyLines = apiKey(FUZZ_KEYS).chain((key) =>
      fc.constantFrom<string[]>(
        key === undefined ? [] : [`X-API-Key: ${key}`],
        key === undefined ? [] : [`x-api-key: ${key}`, `X-Api-Key: ${key}`],
        key === undefined ? [] : [`X-API-Key: ${key}`, 'X-API-Key: wrong'],
        [`X-API-Key: ${'k'.repeat(15_000)}`],
      ),
    );
    const typeLines = fc.oneof(
      contentType.map((t) => (t === undefined ? [] : [`Content-Type: ${t}`])),
      fc.constant(['Content-Type: application/json', 'Content-Type: text/plain']),
      fc.constant(['Content-Type: text/plain', 'Content-Type: application/json']),
    );
    const wireCase = fc.record({
      keys: keyLines,
      types: typeLines,
      body: fc.oneof(fc.constant(VALID), mutatedBody('create')),
      encoding: fc.constantFrom<Encoding>('identity', 'identity', 'identity', 'gzip', 'gzip-corrupt', 'gzip-bomb', 'compress'),
      framing: fc.constantFrom<Framing>('exact', 'exact', 'exact', 'short', 'long', 'chunked', 'bad-chunked', 'none', 'both'),
      extra: fc.subarray(['Connection: close', 'Expect: 100-continue', 'Accept-Encoding: gzip', 'X-Forwarded-For: 1.2.3.4', 'Content-Length: 5']),
    });
    await fc.assert(
      fc.asyncProperty(wireCase, async (w) => {
        const { bytes, header } = encode(w.body, w.encoding);
        // A second Content-Length only makes sense beside one that differs; Node refuses both.
        const extra = w.framing === 'exact' ? w.extra : w.extra.filter((l) => !l.startsWith('Content-Length'));
        const headerLines = [...w.keys, ...w.types, ...(header === null ? [] : [`Content-Encoding: ${header}`]), ...extra];
        const insertsBefore = gateway.inserts.length;
        // A short body is only ended by the half-close (Node then answers nothing or 400);
        // every other case gets its answer on the open connection.
        const responses = await rawExchange(gateway.port, build({ headerLines, body: bytes, framing: w.framing }), { end: w.framing === 'short' });
        checkResponses(responses, insertsBefore, w.framing !== 'short');
      }),
      { numRuns: 600 * RUNS },
    );
  });

  it('reads a gzip body, and answers a gzip bomb 413 by its inflated size', async () => {
    const ok = await rawExchange(gateway.port, build({ headerLines: [`X-API-Key: ${KEY}`, 'Content-Type: application/json', 'Content-Encoding: gzip'], body: gzipSync(VALID), framing: 'exact' }), { end: false });
    expect(ok.map((r) => r.status)).toEqual([200]);
    const bomb = encode(VALID, 'gzip-bomb');
    expect(bomb.bytes.length).toBeLessThan(FUZZ_MAX_BODY_BYTES);
    const answer = await rawExchange(gateway.port, build({ headerLines: [`X-API-Key: ${KEY}`, 'Content-Type: application/json', 'Content-Encoding: gzip'], body: bomb.bytes, framing: 'exact' }), { end: false });
    expect(answer.map((r) => [r.status, r.body])).toEqual([[413, JSON.stringify({ details: `Body is larger than ${FUZZ_MAX_BODY_BYTES} bytes`, code: 'BODY_TOO_LARGE' })]]);
  });

  it('answers 415 for an unknown Content-Encoding and 400 for a body cut short', async () => {
    const compress = await rawExchange(gateway.port, build({ headerLines: [`X-API-Key: ${KEY}`, 'Content-Type: application/json', 'Content-Encoding: compress'], body: Buffer.from(VALID), framing: 'exact' }), { end: false });
    expect(compress.map((r) => [r.status, JSON.parse(r.body).code])).toEqual([[415, 'UNSUPPORTED_MEDIA_TYPE']]);
    assertNoLeak(compress[0]!.body, 415);
    const short = await rawExchange(gateway.port, build({ headerLines: [`X-API-Key: ${KEY}`, 'Content-Type: application/json'], body: Buffer.from(VALID), framing: 'short' }), { end: true });
    for (const r of short) expect(r.status).toBe(400);
  });

  it('leaves headers over 16 KiB to Node, which answers 431 before any router code runs', async () => {
    const answer = await rawExchange(gateway.port, build({ headerLines: [`X-API-Key: ${'k'.repeat(20_000)}`, 'Content-Type: application/json'], body: Buffer.from(VALID), framing: 'exact' }), { end: false });
    expect(answer.map((r) => r.status)).toEqual([431]);
    const justUnder = await rawExchange(gateway.port, build({ headerLines: [`X-API-Key: ${'k'.repeat(15_000)}`, 'Content-Type: application/json'], body: Buffer.from(VALID), framing: 'exact' }), { end: false });
    expect(justUnder.map((r) => [r.status, r.body])).toEqual([[401, JSON.stringify({ details: 'Invalid API key', code: 'INVALID_API_KEY' })]]);
  });
});
