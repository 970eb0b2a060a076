/**
 * The dashboard's event stream with clients that do not read: one that stops reading is
 * disconnected once what waits for it passes the bound, instead of held in memory without
 * end, while one that reads gets every event; and the streams open at once are capped.
 * The dashboard's routes run in this process, fed by a router stand-in whose events the
 * test emits.
 */
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryStorage, type SmsRouter } from '../../src/index.js';
import { dashboardRoutes } from '../../demo/dashboard/routes.js';
import { eventually } from '../helpers/poll.js';

/** The router's `on`/`off`, which is all the dashboard listens with, and a way to emit. */
function fakeRouter(): { sms: SmsRouter; emit: (name: string, payload: unknown) => void } {
  const listeners = new Map<string, Set<(payload: unknown) => void>>();
  const sms = {
    credit: null,
    optOuts: { list: async () => [] },
    on(name: string, listener: (payload: unknown) => void) {
      listeners.set(name, (listeners.get(name) ?? new Set()).add(listener));
      return sms;
    },
    off(name: string, listener: (payload: unknown) => void) {
      listeners.get(name)?.delete(listener);
      return sms;
    },
  } as unknown as SmsRouter;
  return { sms, emit: (name, payload) => listeners.get(name)?.forEach((listener) => listener(payload)) };
}

const servers: Server[] = [];
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

async function dashboard(options: { maxStreams?: number } = {}) {
  const { sms, emit } = fakeRouter();
  const app = express().use(
    dashboardRoutes({
      sms, storage: new MemoryStorage(), principalId: 'demo', apiKey: 'k', basePath: '/api/outbox', carrier: 'simulated carrier',
      metrics: async () => ({ contentType: 'text/plain', text: '' }),
      ...options,
    }),
  );
  const server = createServer(app);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, emit };
}

/** A client of /demo/events on a bare socket: what it received, and whether the server hung up. */
function streamClient(port: number) {
  const socket = connect({ host: '127.0.0.1', port });
  sockets.push(socket);
  const state = { received: 0, text: '', ended: false };
  socket.on('data', (chunk: Buffer) => {
    state.received += chunk.length;
    if (state.text.length < 4096) state.text += chunk.toString('latin1');
  });
  socket.on('close', () => (state.ended = true));
  socket.write(`GET /demo/events HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
  return { socket, state };
}

/** A message as the router's `message.accepted` carries it, with a text of `size` characters. */
function accepted(i: number, size: number) {
  const message = {
    ref: `00000000-0000-7000-8000-${String(i).padStart(12, '0')}`, principalId: 'demo', endpoint: 'quick', profileCode: '12345', sender: '',
    recipient: '254712345678', text: 'x'.repeat(size), messageType: 1, reqType: 1, externalId: `e-${i}`, recipientField: 'recipient',
    referenceField: 'external_id', smsCount: 1, encoding: 'gsm7', callbackUrl: null, callbackSecret: null, createdAt: Date.now(), priority: 'bulk',
  };
  return { message };
}

describe('the dashboard\u2019s event stream', () => {
  it('disconnects a client that stops reading once 4 MiB wait for it, and keeps one that reads', async () => {
    const { port, emit } = await dashboard();
    const reader = streamClient(port);
    const stalled = streamClient(port);
    await eventually(() => reader.state.text.includes('event: snapshot') && stalled.state.text.includes('event: snapshot'), { what: 'both streams open' });
    stalled.socket.pause();

    // 24 MB of rows, in bursts of 200 KB, each given a moment to reach the clients.
    const total = 12_000;
    for (let i = 0; i < total; i += 100) {
      for (let j = i; j < i + 100; j += 1) emit('message.accepted', accepted(j, 1800));
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    await eventually(() => reader.state.text.length > 0 && reader.state.received > total * 1800, { timeoutMs: 20_000, what: 'the reading client to get every row' });
    expect(reader.state.ended).toBe(false);

    // The stalled client, reading again, gets what the kernel held, then the end: the server
    // hung up on it.
    stalled.socket.resume();
    await eventually(() => stalled.state.ended, { timeoutMs: 20_000, what: 'the server to hang up on the stalled client' });
    expect(stalled.state.received).toBeLessThan(total * 1800);
  }, 60_000);

  it('refuses a stream past the cap with 503 TOO_MANY_STREAMS, and takes one again once a page closes', async () => {
    const { port } = await dashboard({ maxStreams: 2 });
    const first = streamClient(port);
    const second = streamClient(port);
    await eventually(() => first.state.text.includes('event: snapshot') && second.state.text.includes('event: snapshot'), { what: 'two streams open' });
    const third = await fetch(`http://127.0.0.1:${port}/demo/events`);
    expect(third.status).toBe(503);
    expect(third.headers.get('retry-after')).toBe('10');
    expect(await third.json()).toMatchObject({ code: 'TOO_MANY_STREAMS' });

    first.socket.destroy();
    const again = streamClient(port);
    await eventually(() => again.state.text.includes('event: snapshot'), { what: 'a stream open again' });
  });
});
