/**
 * How the send endpoints read a body: every empty body gets
 * the one answer the README's table names, a body nested deeper than the documented limit
 * is refused before it is built (compressed or not), and a host that parses JSON before the
 * router still gets its requests validated, and is told once what that changes.
 */
import { once } from 'node:events';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import express, { type Express } from 'express';
import fc from 'fast-check';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { createSmsRouter, SimulatorDelivery, type SmsRouter } from '../../src/index.js';
import { MAX_JSON_DEPTH, nestedDeeperThan } from '../../src/http/parse-body.js';
import { createGateway, KEY, testKeys, type TestGateway } from '../helpers/gateway.js';

const routers: SmsRouter[] = [];
const servers: http.Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
  for (const router of routers.splice(0)) await router.close();
});

function gateway(): TestGateway {
  const built = createGateway();
  routers.push(built.sms);
  return built;
}

/** Listens on 127.0.0.1 and returns the port. */
async function listen(app: Express): Promise<number> {
  const server = http.createServer(app);
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}

/**
 * Sends `head` (request line and headers, no blank line) and `body` as they are, over a
 * socket of its own, and reads the answer up to the close: the framing of an empty body
 * (no length, `Content-Length: 0`, an empty chunked body) is exactly what the test says.
 */
async function raw(port: number, head: string, body: Buffer | string = ''): Promise<{ status: number; body: string }> {
  const socket = net.connect(port, '127.0.0.1');
  await once(socket, 'connect');
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  // Not half-closed after the body: Node's server takes that as the client giving up.
  // `Connection: close` has the server close the socket once it has answered.
  socket.write(`${head}\r\nConnection: close\r\n\r\n`);
  socket.write(body);
  await once(socket, 'close');
  const text = Buffer.concat(chunks).toString('utf8');
  const split = text.indexOf('\r\n\r\n');
  return { status: Number(text.slice(9, 12)), body: text.slice(split + 4) };
}

const SEND = (path: string) => `POST /api/outbox/${path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nX-API-Key: ${KEY}`;
const NOT_JSON = { details: 'Body is not valid JSON', code: 'INVALID_JSON' };

describe('an empty body', () => {
  it('is answered 400 "Body is not valid JSON" however it is framed, on both endpoints', async () => {
    const port = await listen(gateway().app);
    for (const path of ['create', 'premium']) {
      const forms: [string, string, Buffer | string][] = [
        ['Content-Length: 0', `${SEND(path)}\r\nContent-Length: 0`, ''],
        ['an empty chunked body', `${SEND(path)}\r\nTransfer-Encoding: chunked`, '0\r\n\r\n'],
        ['no length at all', SEND(path), ''],
        ['gzip of nothing', `${SEND(path)}\r\nContent-Encoding: gzip\r\nContent-Length: ${gzipSync('').length}`, gzipSync('')],
      ];
      for (const [form, head, body] of forms) {
        const answer = await raw(port, head, body);
        expect({ form, path, status: answer.status, body: JSON.parse(answer.body) as unknown }).toEqual({ form, path, status: 400, body: NOT_JSON });
      }
    }
  });
});

/** `depth` nested arrays around `inner`. */
const arrays = (depth: number, inner = '') => `${'['.repeat(depth)}${inner}${']'.repeat(depth)}`;
/** A valid quick send with `extra` as the value of a field the router does not know. */
const withExtra = (extra: string, text = 'Hello') =>
  `{"profile_code":"12345","messages":[{"recipient":"254712345678","message":${JSON.stringify(text)}}],"client_meta":${extra}}`;
const TOO_DEEP = { details: 'Body is nested more than 32 levels deep', code: 'INVALID_JSON' };

describe('nesting', () => {
  it('refuses a body nested past 32 levels with 400 naming the limit, and counts only brackets outside strings', async () => {
    const { app } = gateway();
    const post = (body: string) => request(app).post('/api/outbox/create').set('X-API-Key', KEY).set('Content-Type', 'application/json').send(body);

    const deep = await post(arrays(200_000));
    expect(deep.status).toBe(400);
    expect(deep.body).toEqual(TOO_DEEP);
    // One level past the limit: the body is an object (1), the extra field's arrays 32 more.
    const justOver = await post(withExtra(arrays(32)));
    expect(justOver.status).toBe(400);
    expect(justOver.body).toEqual(TOO_DEEP);
    const objects = await post(withExtra(`${'{"a":'.repeat(40)}1${'}'.repeat(40)}`));
    expect(objects.body).toEqual(TOO_DEEP);

    // At the limit, and with brackets, escaped quotes and escaped backslashes inside strings,
    // which are text and nest nothing.
    expect((await post(withExtra(arrays(31)))).status).toBe(200);
    // Encoded, the text is `\"[[[...` and `\\{{{...`: an escaped quote must not end the
    // string, and an escaped backslash must not escape anything after it.
    const bracketText = `"${'['.repeat(40)} \\${'{'.repeat(40)}`;
    const inText = await post(withExtra(JSON.stringify(['\\', '"', '{"a":[[[', 'x\\'.repeat(50)]), bracketText));
    expect(inText.status, JSON.stringify(inText.body)).toBe(200);
    // A key with brackets in it, and a string ending in an escaped backslash followed by real nesting.
    const tricky = withExtra(`{"[[[[":{"k\\\\":${arrays(28)}}}`);
    expect((await post(tricky)).status).toBe(200);
    expect((await post(withExtra(`{"[[[[":{"k\\\\":${arrays(31)}}}`))).body).toEqual(TOO_DEEP);
  });

  it('counts exactly the nesting JSON.parse would build, whatever the strings hold', () => {
    expect(MAX_JSON_DEPTH).toBe(32);
    // Strings made of the characters a scanner could trip on.
    const tricky = fc.string({ unit: fc.constantFrom('"', '\\', '[', ']', '{', '}', ':', ',', 'a', '\u20ac', '\u{1F600}'), maxLength: 6 });
    const { value } = fc.letrec((tie) => ({
      value: fc.oneof({ depthSize: 'small' }, tricky, fc.integer(), fc.constant(null), tie('array'), tie('object')),
      array: fc.array(tie('value'), { maxLength: 3 }),
      object: fc.dictionary(tricky, tie('value'), { maxKeys: 3 }),
    }));
    const depthOf = (v: unknown): number =>
      typeof v === 'object' && v !== null ? 1 + Math.max(0, ...Object.values(v).map(depthOf)) : 0;
    fc.assert(
      fc.property(value, fc.boolean(), (v, pretty) => {
        const bytes = Buffer.from(JSON.stringify(v, null, pretty ? 2 : undefined));
        const depth = depthOf(v);
        for (let limit = 0; limit <= depth + 1; limit++) expect(nestedDeeperThan(bytes, limit)).toBe(depth > limit);
      }),
      { numRuns: 2_000 },
    );
  });

  it('checks the decoded text of a gzip or brotli body (a few dozen bytes on the wire)', async () => {
    const { app } = gateway();
    const text = arrays(200_000);
    const port = await listen(app);
    for (const [encoding, bytes] of [['gzip', gzipSync(text)], ['br', brotliCompressSync(text)]] as const) {
      expect(bytes.length).toBeLessThan(1_000);
      const answer = await raw(port, `${SEND('create')}\r\nContent-Encoding: ${encoding}\r\nContent-Length: ${bytes.length}`, bytes);
      expect({ encoding, status: answer.status, body: JSON.parse(answer.body) as unknown }).toEqual({ encoding, status: 400, body: TOO_DEEP });
    }
  });
});

describe('charsets', () => {
  it('answers a body declared in a charset other than UTF-8 with 415, as the error table says, even when it is valid JSON in it', async () => {
    const port = await listen(gateway().app);
    const json = JSON.stringify({ profile_code: '12345', messages: [{ recipient: '254712345678', message: 'Hello' }] });
    const head = (charset: string, bytes: Buffer) =>
      `POST /api/outbox/create HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json; charset=${charset}\r\nX-API-Key: ${KEY}\r\nContent-Length: ${bytes.length}`;
    for (const [charset, bytes] of [
      ['utf-16le', Buffer.from(json, 'utf16le')],
      ['utf-7', Buffer.from(json)],
    ] as const) {
      const answer = await raw(port, head(charset, bytes), bytes);
      expect({ charset, status: answer.status, body: JSON.parse(answer.body) as unknown }).toEqual({
        charset,
        status: 415,
        body: { details: 'Body must be UTF-8 encoded JSON', code: 'UNSUPPORTED_MEDIA_TYPE' },
      });
    }
    const utf8 = Buffer.from(json);
    expect((await raw(port, head('utf-8', utf8), utf8)).status).toBe(200);
  });
});

describe('a host that parses JSON itself', () => {
  const valid = { profile_code: '12345', messages: [{ recipient: '254712345678', message: 'Hello', external_id: 'h-1' }] };

  function host(order: 'host parser first' | 'router first'): { app: Express; sms: SmsRouter } {
    const sms = createSmsRouter({ verifyKey: testKeys, delivery: new SimulatorDelivery({ seed: 7, latencyMs: [1, 5] }) });
    routers.push(sms);
    const app = express();
    if (order === 'host parser first') app.use(express.json());
    app.use(sms);
    if (order === 'router first') app.use(express.json());
    app.post('/host/echo', (req, res) => void res.json({ echoed: req.body as unknown }));
    return { app, sms };
  }

  /** Collects this file's warnings about a host-parsed body while `run` runs. */
  async function warningsDuring(run: () => Promise<void>): Promise<Error[]> {
    const seen: Error[] = [];
    const listener = (warning: Error & { code?: string }) => {
      if (warning.code === 'SMS_OUTBOX_BODY_PARSED_BY_HOST') seen.push(warning);
    };
    process.on('warning', listener);
    try {
      await run();
      // process.emitWarning delivers on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('warning', listener);
    }
    return seen;
  }

  it('with express.json() before the router: uses its parsed body, still validates, and warns once', async () => {
    const { app } = host('host parser first');
    const warnings = await warningsDuring(async () => {
      const ok = await request(app).post('/api/outbox/create').set('X-API-Key', KEY).send(valid);
      expect(ok.status).toBe(200);
      expect(ok.body[0]).toMatchObject({ external_id: 'h-1', recipient: '254712345678', sms_count: 1 });
      const bad = await request(app)
        .post('/api/outbox/create')
        .set('X-API-Key', KEY)
        .send({ ...valid, messages: [{ recipient: '+254712345678', message: 'Hello' }] });
      expect([bad.status, bad.body.code]).toEqual([422, 'VALIDATION_FAILED']);
      expect(bad.body.details).toMatch(/^messages\[0\]\.recipient: must not start with "\+"/);
      // express.json() reads Content-Length: 0 as {}; the router still answers it as empty.
      const port = await listen(app);
      const empty = await raw(port, `${SEND('create')}\r\nContent-Length: 0`);
      expect([empty.status, JSON.parse(empty.body)]).toEqual([400, NOT_JSON]);
    });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.message).toMatch(/express\.json\(\)/);
    expect(warnings[0]!.message).toMatch(/maxBodyBytes/);

    // What README says changes: malformed JSON never reaches the router, so the host's
    // parser answers it (Express's default: an HTML page), not { details, code }.
    const malformed = await request(app).post('/api/outbox/create').set('X-API-Key', KEY).set('Content-Type', 'application/json').send('{"profile_code": ');
    expect(malformed.status).toBe(400);
    expect(malformed.headers['content-type']).toMatch(/^text\/html/);
  });

  it('with express.json() after the router: the router keeps its own parsing, limits and errors, with no warning', async () => {
    const { app } = host('router first');
    const warnings = await warningsDuring(async () => {
      // 150 KB: over express.json()'s default 100 KB, under the router's 1 MiB.
      const big = {
        profile_code: '12345',
        messages: Array.from({ length: 100 }, (_, i) => ({ recipient: '254712345678', message: 'x'.repeat(1_500), external_id: `big-${i}` })),
      };
      expect(JSON.stringify(big).length).toBeGreaterThan(150_000);
      const ok = await request(app).post('/api/outbox/create').set('X-API-Key', KEY).send(big);
      expect(ok.status).toBe(200);
      expect(ok.body).toHaveLength(100);
      const malformed = await request(app).post('/api/outbox/create').set('X-API-Key', KEY).set('Content-Type', 'application/json').send('{"profile_code": ');
      expect([malformed.status, malformed.body]).toEqual([400, NOT_JSON]);
      const port = await listen(app);
      const empty = await raw(port, `${SEND('create')}\r\nContent-Length: 0`);
      expect([empty.status, JSON.parse(empty.body)]).toEqual([400, NOT_JSON]);
      // The host's own routes still get their parsed JSON.
      const echo = await request(app).post('/host/echo').send({ a: [1, 2] });
      expect(echo.body).toEqual({ echoed: { a: [1, 2] } });
    });
    expect(warnings).toEqual([]);
  });
});
