/**
 * A customer's inbound webhook receiver for the tests: a local HTTP server that answers each
 * POST with the next status of a script (the last one repeats) and keeps what it received.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One POST the receiver got. */
export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  status: number;
}

/** A running receiver. */
export interface Receiver {
  url: string;
  received: Received[];
  close(): Promise<void>;
}

/** Starts a receiver on 127.0.0.1 answering with `statuses` in turn (default always 204). */
export async function startReceiver(statuses: readonly number[] = [204]): Promise<Receiver> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      const status = statuses[Math.min(received.length, statuses.length - 1)]!;
      received.push({ headers: req.headers, body, status });
      res.statusCode = status;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/inbound`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
