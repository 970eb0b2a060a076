/**
 * Compressed send bodies get the same answers on Express 4 and 5: Express 5's parser decodes
 * brotli and Express 4's does not, so the router decodes it for both (parse-body.ts). The
 * suite runs on both (`npm test`, `npm run test:express4`), so each case here holds on each.
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import type { SmsRouter } from '../../src/index.js';
import { createGateway, KEY, type TestGateway } from '../helpers/gateway.js';

const routers: SmsRouter[] = [];
afterEach(async () => {
  for (const router of routers.splice(0)) await router.close();
});

function gateway(options: Parameters<typeof createGateway>[0] = {}): TestGateway {
  const built = createGateway(options);
  routers.push(built.sms);
  return built;
}

const ENCODERS = { gzip: gzipSync, br: brotliCompressSync } as const;

/** Posts `bytes` as they are, with `Content-Encoding: encoding`, over a real socket. */
async function send(built: TestGateway, encoding: keyof typeof ENCODERS, bytes: Buffer, type = 'application/json') {
  const server = built.app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  try {
    const { port } = server.address() as AddressInfo;
    const res = await fetch(`http://127.0.0.1:${port}/api/outbox/create`, {
      method: 'POST',
      headers: { 'X-API-Key': KEY, 'Content-Type': type, 'Content-Encoding': encoding },
      body: bytes,
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> & Record<number, Record<string, unknown>> };
  } finally {
    server.closeAllConnections();
    server.close();
  }
}

const quick = (message = 'Hello') =>
  JSON.stringify({ profile_code: '12345', messages: [{ recipient: '254712345678', message }] });

describe.each(Object.keys(ENCODERS) as (keyof typeof ENCODERS)[])('a %s body', (encoding) => {
  const encode = ENCODERS[encoding];

  it('is decoded and accepted', async () => {
    const answer = await send(gateway(), encoding, encode(quick()));
    expect(answer.status).toBe(200);
    expect(answer.body[0]).toMatchObject({ recipient: '254712345678', sms_count: 1 });
  });

  it('is held to limits.maxBodyBytes once decoded, however small on the wire', async () => {
    const text = quick('x'.repeat(4_000));
    const bytes = encode(text);
    expect(bytes.length).toBeLessThan(200);
    const answer = await send(gateway({ limits: { maxBodyBytes: 2_048 } }), encoding, bytes);
    expect(answer.status).toBe(413);
    expect(answer.body).toMatchObject({ details: 'Body is larger than 2048 bytes' });
  });

  it('that does not decode is answered 400', async () => {
    const bytes = encode(quick());
    const answer = await send(gateway(), encoding, Buffer.concat([bytes.subarray(0, 8), Buffer.from('not compressed')]));
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ details: 'Body is not valid JSON' });
  });

  it('in a charset other than UTF-8 is answered 415', async () => {
    const answer = await send(gateway(), encoding, encode(quick()), 'application/json; charset=latin1');
    expect(answer.status).toBe(415);
    expect(answer.body).toMatchObject({ details: 'Body must be UTF-8 encoded JSON' });
  });
});
