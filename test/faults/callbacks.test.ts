/**
 * Delivery report receivers that misbehave: hang, reset the connection, drip, or answer
 * with an endless body. Each attempt ends within `dlr.timeoutMs`, reads at most a bounded
 * part of the answer, and is retried on the schedule until it is used up.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { outcome, type DlrEvent, type DlrFailedEvent, type DlrRetryingEvent } from '../../src/index.js';
import { KEY } from '../helpers/gateway.js';
import { eventually } from '../helpers/poll.js';
import { ScriptedDelivery } from '../helpers/scripted-delivery.js';
import { startFuzzGateway, type FuzzGateway } from '../fuzz/harness.js';

const TIMEOUT_MS = 300;
const SCHEDULE = [0, 30, 30];

interface BadReceiver {
  url: string;
  requests: number;
  /** Bytes the receiver managed to write before the sender hung up. */
  bytesWritten: number;
  close(): Promise<void>;
}

/** A receiver on 127.0.0.1 that answers every request with `behave`. */
async function badReceiver(behave: (res: ServerResponse, socket: Socket, receiver: BadReceiver) => void): Promise<BadReceiver> {
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const receiver: BadReceiver = {
    url: '',
    requests: 0,
    bytesWritten: 0,
    close: async () => {
      for (const timer of timers) clearInterval(timer);
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server: Server = createServer((req, res) => {
    req.resume();
    receiver.requests++;
    behave(res, req.socket, receiver);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  (receiver as { timers?: Set<NodeJS.Timeout> }).timers = timers;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/dlr`;
  return receiver;
}

/** Writes `chunk` every `ms` until the connection goes away; counts what got out. */
function drip(res: ServerResponse, receiver: BadReceiver, chunk: Buffer, ms: number): void {
  const timers = (receiver as { timers?: Set<NodeJS.Timeout> }).timers!;
  const timer = setInterval(() => {
    if (res.destroyed || res.writableEnded) {
      clearInterval(timer);
      timers.delete(timer);
      return;
    }
    res.write(chunk, () => {
      receiver.bytesWritten += chunk.length;
    });
  }, ms);
  timers.add(timer);
}

let gateway: FuzzGateway | undefined;
let receiver: BadReceiver | undefined;
afterEach(async () => {
  await gateway?.close();
  await receiver?.close();
  gateway = undefined;
  receiver = undefined;
});

interface Outcomes {
  sent: DlrEvent[];
  retrying: DlrRetryingEvent[];
  failed: DlrFailedEvent[];
}

/** Sends one message with a callback to `url`, delivers it, and collects the dlr events. */
async function deliverWithCallback(url: string): Promise<Outcomes> {
  const carrier = new ScriptedDelivery();
  gateway = await startFuzzGateway({
    delivery: carrier,
    worker: { pollIntervalMs: 20 },
    dlr: { allowPrivateAddresses: ['127.0.0.0/8'], timeoutMs: TIMEOUT_MS, schedule: SCHEDULE, pollIntervalMs: 20 },
  });
  const outcomes: Outcomes = { sent: [], retrying: [], failed: [] };
  gateway.sms.on('dlr.sent', (e) => outcomes.sent.push(e));
  gateway.sms.on('dlr.retrying', (e) => outcomes.retrying.push(e));
  gateway.sms.on('dlr.failed', (e) => outcomes.failed.push(e));
  const answer = await gateway.send({
    method: 'POST',
    path: '/api/outbox/create',
    headers: { 'content-type': 'application/json', 'x-api-key': KEY },
    body: JSON.stringify({ profile_code: '12345', messages: [{ recipient: '254712345678', message: 'dlr' }], dlr_callback_url: url }),
  });
  expect(answer.status).toBe(200);
  const part = await eventually(() => carrier.submitted[0]);
  await carrier.receipt({ carrierId: part.carrierId, outcome: outcome('delivered', 'delivered_to_terminal') });
  return outcomes;
}

describe('callback receivers that misbehave', () => {
  it('a receiver that never answers: every attempt ends at the timeout, then the report fails after the schedule', async () => {
    receiver = await badReceiver(() => undefined);
    const started = Date.now();
    const outcomes = await deliverWithCallback(receiver.url);
    const failed = await eventually(() => outcomes.failed[0], { timeoutMs: 10_000 });
    expect(failed.attempt).toBe(SCHEDULE.length);
    expect(outcomes.retrying).toHaveLength(SCHEDULE.length - 1);
    // Counted from the sender's side: on a loaded machine an attempt can reach its timeout
    // before the receiver has read its request, so the receiver may count fewer.
    expect(receiver.requests).toBeGreaterThan(0);
    expect(receiver.requests).toBeLessThanOrEqual(SCHEDULE.length);
    for (const attempt of [...outcomes.retrying, ...outcomes.failed]) {
      expect(attempt.statusCode).toBeNull();
      expect(attempt.error).toMatch(/timed out/);
      expect(attempt.durationMs).toBeLessThan(TIMEOUT_MS + 500);
      expect(attempt.durationMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
    }
    expect(Date.now() - started).toBeLessThan(SCHEDULE.length * (TIMEOUT_MS + 500) + 3_000);
  });

  it('a receiver that resets the connection: retried on the schedule, then failed', async () => {
    receiver = await badReceiver((_res, socket) => socket.resetAndDestroy());
    const outcomes = await deliverWithCallback(receiver.url);
    const failed = await eventually(() => outcomes.failed[0], { timeoutMs: 10_000 });
    expect(receiver.requests).toBe(SCHEDULE.length);
    expect(failed.attempt).toBe(SCHEDULE.length);
    expect(failed.error).toMatch(/ECONNRESET|socket hang up/);
  });

  it('a receiver that answers 200 with an endless body: delivered, and the sender stops reading', async () => {
    let hungUp = false;
    receiver = await badReceiver((res, _socket, r) => {
      res.once('close', () => (hungUp = true));
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      drip(res, r, Buffer.alloc(64 * 1024, 0x61), 1);
    });
    const outcomes = await deliverWithCallback(receiver.url);
    const sent = await eventually(() => outcomes.sent[0], { timeoutMs: 10_000 });
    expect(sent.statusCode).toBe(200);
    expect(receiver.requests).toBe(1);
    // The sender hung up after at most 64 KiB; socket buffers let a few MiB more out at most.
    await eventually(() => receiver!.bytesWritten > 0);
    await eventually(() => hungUp, { what: 'the sender to close the connection' });
    expect(receiver.bytesWritten).toBeLessThan(32 * 1024 * 1024);
  });

  it('a receiver that answers 500 with an endless body: each attempt bounded, retried, then failed', async () => {
    receiver = await badReceiver((res, _socket, r) => {
      res.writeHead(500);
      drip(res, r, Buffer.alloc(64 * 1024, 0x62), 1);
    });
    const outcomes = await deliverWithCallback(receiver.url);
    const failed = await eventually(() => outcomes.failed[0], { timeoutMs: 10_000 });
    expect(failed.statusCode).toBe(500);
    expect(receiver.requests).toBe(SCHEDULE.length);
    for (const attempt of [...outcomes.retrying, failed]) expect(attempt.durationMs).toBeLessThan(TIMEOUT_MS + 500);
  });

  // A status that had arrived was once lost when the timeout fired mid-body.
  it('a receiver that answers 200 and drips its body: delivered, not retried', async () => {
    receiver = await badReceiver((res, _socket, r) => {
      res.writeHead(200);
      drip(res, r, Buffer.from('x'), 20);
    });
    const outcomes = await deliverWithCallback(receiver.url);
    await eventually(() => outcomes.sent[0] ?? outcomes.failed[0], { timeoutMs: 10_000 });
    expect(outcomes.sent).toHaveLength(1);
    expect(receiver.requests).toBe(1);
  });

  it('a receiver that drips its answer one byte at a time: the attempt still ends within the timeout', async () => {
    receiver = await badReceiver((res, _socket, r) => {
      res.writeHead(503);
      drip(res, r, Buffer.from('x'), 20);
    });
    const outcomes = await deliverWithCallback(receiver.url);
    const failed = await eventually(() => outcomes.failed[0], { timeoutMs: 10_000 });
    expect(receiver.requests).toBe(SCHEDULE.length);
    for (const attempt of [...outcomes.retrying, failed]) {
      expect(attempt.durationMs).toBeLessThan(TIMEOUT_MS + 500);
    }
  });
});
