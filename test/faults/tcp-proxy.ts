/**
 * A TCP proxy on 127.0.0.1 that a fault test can cut and restore: the "network" between
 * the router and a real service.
 */
import net from 'node:net';
import type { AddressInfo } from 'node:net';

/** A running proxy to `127.0.0.1:targetPort`. */
export class TcpProxy {
  readonly #server: net.Server;
  readonly #sockets = new Set<net.Socket>();
  readonly #upstreams = new Set<net.Socket>();
  #up = true;
  #cutOn: ((chunk: Buffer) => boolean) | null = null;
  /** The port clients connect to. */
  port = 0;

  private constructor(targetPort: number) {
    this.#server = net.createServer((client) => {
      this.#sockets.add(client);
      client.on('close', () => this.#sockets.delete(client));
      client.on('error', () => undefined);
      if (!this.#up) {
        client.destroy();
        return;
      }
      const upstream = net.connect(targetPort, '127.0.0.1');
      this.#sockets.add(upstream);
      this.#upstreams.add(upstream);
      upstream.on('close', () => {
        this.#sockets.delete(upstream);
        this.#upstreams.delete(upstream);
        client.destroy();
      });
      upstream.on('error', () => undefined);
      client.on('close', () => upstream.destroy());
      upstream.pipe(client);
      client.on('data', (chunk: Buffer) => {
        if (this.#cutOn?.(chunk)) {
          // The statement reaches the server; its answer never comes back.
          this.#cutOn = null;
          this.#up = false;
          upstream.unpipe(client);
          client.destroy();
          upstream.write(chunk, () => this.cut());
          return;
        }
        upstream.write(chunk);
      });
    });
  }

  /** Starts a proxy to `targetPort` on 127.0.0.1. */
  static async start(targetPort: number): Promise<TcpProxy> {
    const proxy = new TcpProxy(targetPort);
    await new Promise<void>((resolve) => proxy.#server.listen(0, '127.0.0.1', resolve));
    proxy.port = (proxy.#server.address() as AddressInfo).port;
    return proxy;
  }

  /** Drops every open connection and every new one until {@link restore}. */
  cut(): void {
    this.#up = false;
    for (const socket of this.#sockets) socket.destroy();
  }

  /** Forwards the client chunk that `predicate` matches, then cuts at once. */
  cutAfter(predicate: (chunk: Buffer) => boolean): void {
    this.#cutOn = predicate;
  }

  /** The local ports of the open connections to the target: the server sees them as client ports. */
  upstreamPorts(): number[] {
    return [...this.#upstreams].map((s) => s.localPort).filter((port): port is number => port !== undefined);
  }

  /** Lets connections through again. */
  restore(): void {
    this.#up = true;
  }

  /** Stops listening and drops everything. */
  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}
