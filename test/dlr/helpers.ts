/**
 * Shared parts of the DLR tests: a real HTTP receiver on 127.0.0.1, and stored terminal
 * messages with a callback.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach } from 'vitest';
import { outcome } from '../../src/lifecycle/states.js';
import type { NewMessage, Storage } from '../../src/storage/contract.js';

/** One request the receiver got. */
export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  url: string;
  at: number;
}

/** What the receiver answers to its n-th request (0-based). */
export interface Answer {
  status: number;
  headers?: Record<string, string>;
  /** Answer after this long (a slow receiver). */
  delayMs?: number;
}

/** A running receiver. */
export interface Receiver {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  port: number;
  requests: Received[];
  /** Most requests in progress at once. */
  maxConcurrent: number;
  /** TCP connections open now (a sender's idle keep-alive sockets included). */
  openConnections: number;
  close(): Promise<void>;
}

/** Starts an HTTP receiver on 127.0.0.1 that answers each request with `answer(n)`. */
export async function startReceiver(
  answer: (n: number, request: Received) => Answer = () => ({ status: 200 }),
): Promise<Receiver> {
  let current = 0;
  const timers = new Set<NodeJS.Timeout>();
  const receiver: Receiver = {
    origin: '',
    port: 0,
    requests: [],
    maxConcurrent: 0,
    openConnections: 0,
    close: async () => {
      for (const timer of timers) clearTimeout(timer);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const received: Received = { headers: req.headers, body, url: req.url ?? '', at: Date.now() };
      const n = receiver.requests.length;
      receiver.requests.push(received);
      current++;
      receiver.maxConcurrent = Math.max(receiver.maxConcurrent, current);
      const { status, headers = {}, delayMs = 0 } = answer(n, received);
      const respond = () => {
        current--;
        res.writeHead(status, headers).end('ok');
      };
      if (delayMs === 0) respond();
      else {
        const timer = setTimeout(() => {
          timers.delete(timer);
          respond();
        }, delayMs);
        timers.add(timer);
      }
    });
  });
  server.on('connection', (socket) => {
    receiver.openConnections++;
    socket.on('close', () => receiver.openConnections--);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.port = (server.address() as AddressInfo).port;
  receiver.origin = `http://127.0.0.1:${receiver.port}`;
  return receiver;
}

/**
 * What a test file's tests leave to clean up: `cleanups` run after each test, the last
 * added first, and `receiver` starts a receiver that is closed with them. Call once, at
 * the top of the file.
 */
export function cleanupAfterEach(): {
  cleanups: (() => Promise<void> | void)[];
  receiver: (...args: Parameters<typeof startReceiver>) => Promise<Receiver>;
} {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  const receiver = async (...args: Parameters<typeof startReceiver>): Promise<Receiver> => {
    const started = await startReceiver(...args);
    cleanups.push(() => started.close());
    return started;
  };
  return { cleanups, receiver };
}

let counter = 0;

/** A message as a request would store it, with a callback URL. */
export function newMessage(callbackUrl: string | null, now: number, overrides: Partial<NewMessage> = {}): NewMessage {
  counter++;
  return {
    ref: `ref-${counter}-${Math.random().toString(36).slice(2, 8)}`,
    principalId: 'principal-1',
    endpoint: 'quick',
    profileCode: '12345',
    sender: 'ACME',
    recipient: '254712345678',
    text: 'Hello',
    messageType: 1,
    reqType: 1,
    externalId: 'abc-1',
    recipientField: 'recipient',
    referenceField: 'external_id',
    smsCount: 1,
    encoding: 'GSM-7',
    callbackUrl,
    callbackSecret: null,
    createdAt: now,
    priority: 'bulk',
    weight: 1,
    ...overrides,
  };
}

/** Stores `messages` and makes them `delivered`, which creates their pending reports. */
export async function storeTerminal(storage: Storage, messages: NewMessage[], now: number): Promise<void> {
  await storage.insertMessages(messages);
  for (const message of messages) {
    await storage.finish(message.ref, outcome('delivered', 'delivered_to_terminal'), now);
  }
}
