/**
 * What every benchmark server shares: the API key, and `serve`, which listens on
 * 127.0.0.1 port 0, prints the port, answers SIGUSR2 with its progress, and on SIGTERM
 * closes cleanly and reports the process's own resource usage before it exits.
 */
import type { Server } from 'node:http';
import type { Express } from 'express';

/** The one API key the benchmark router accepts. */
export const BENCH_KEY = 'bench-key-0123456789';
/** The one profile code the key owns. */
export const BENCH_PROFILE = '12345';

/** The text of every benchmark message: GSM-7, one part. */
const BENCH_TEXT = 'Your code is 4821. Pay KES 1,500 to M-PESA now. Asante!';

/** The messages of one benchmark request body: `count` recipients, references `<prefix>-<i>`. */
export function benchItems(count: number, prefix: string): { recipient: string; message: string; external_id: string }[] {
  return Array.from({ length: count }, (_, i) => ({
    recipient: `2547${String(10_000_000 + i)}`,
    message: BENCH_TEXT,
    external_id: `${prefix}-${i}`,
  }));
}

/** One JSON line a server child prints on stdout. */
export type ServerEvent =
  | { event: 'listening'; port: number }
  /** Answer to SIGUSR2: messages that reached a terminal state so far (`null`: not a router). */
  | { event: 'progress'; finished: number | null }
  | { event: 'exit'; resourceUsage: NodeJS.ResourceUsage }
  | { event: 'error'; message: string };

/** Prints one {@link ServerEvent} line. */
export function report(event: ServerEvent): void {
  process.stdout.write(`${JSON.stringify(event)}\n`);
}

/**
 * Listens with `app` and arranges the SIGTERM exit: stop accepting, drop idle keep-alive
 * sockets (the load generator's), run `close`, print the resource usage, exit 0. On
 * SIGUSR2 it prints `finished()`, the router's count of finished messages.
 */
export function serve(
  app: Express,
  close: () => Promise<void> = async () => undefined,
  finished: () => number | null = () => null,
): Server {
  const server = app.listen(0, '127.0.0.1', () => {
    const address = server.address();
    report({ event: 'listening', port: typeof address === 'object' && address !== null ? address.port : 0 });
  });
  server.keepAliveTimeout = 60_000;
  const stop = async () => {
    server.close();
    server.closeAllConnections();
    // A slow close must not keep the harness waiting: the figures are already taken.
    const hard = setTimeout(() => process.exit(0), 10_000);
    hard.unref();
    try {
      await close();
    } catch (error) {
      report({ event: 'error', message: String(error) });
    }
    report({ event: 'exit', resourceUsage: process.resourceUsage() });
    process.exit(0);
  };
  process.on('SIGUSR2', () => report({ event: 'progress', finished: finished() }));
  process.once('SIGTERM', () => void stop());
  process.once('SIGINT', () => void stop());
  return server;
}
