/**
 * The dashboard's Server-Sent Events streams, bounded: at most `maxStreams` open at once,
 * and a client that does not read what it is sent is disconnected once `maxBufferedBytes`
 * wait for it, rather than kept in memory without end. A browser that is merely slow
 * reconnects (EventSource does) and gets a fresh snapshot. Each event is serialized once,
 * however many streams it goes to.
 */
import type { Request, Response } from 'express';
import { refuse } from '../errors.js';

/** The bounds, and what to do when the first stream opens and the last one closes. */
export interface EventStreamOptions {
  /** Streams open at once; one more is refused (503 `TOO_MANY_STREAMS`). */
  maxStreams: number;
  /** Bytes written to a stream and not yet taken by its client, past which it is closed. */
  maxBufferedBytes: number;
  /** Called when the first stream opens: start listening to what feeds them. */
  onFirst?: () => void;
  /** Called when the last stream closes: stop listening. */
  onLast?: () => void;
}

/** One event in the wire format. */
function frame(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** The open streams. */
export class EventStreams {
  readonly #open = new Set<Response>();

  constructor(private readonly options: EventStreamOptions) {}

  /** How many streams are open. */
  get size(): number {
    return this.#open.size;
  }

  /**
   * Opens a stream on `res`, or refuses it when `maxStreams` are open; returns whether it
   * opened. The stream is closed when the client goes.
   */
  open(req: Request, res: Response): boolean {
    if (this.#open.size >= this.options.maxStreams) {
      res.set('Retry-After', '10');
      refuse(res, 'TOO_MANY_STREAMS', `${this.options.maxStreams} dashboard streams are open, as many as the demo serves; close a page`);
      return false;
    }
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store', Connection: 'keep-alive' });
    this.#open.add(res);
    if (this.#open.size === 1) this.options.onFirst?.();
    req.on('close', () => this.#close(res));
    res.on('close', () => this.#close(res));
    return true;
  }

  /** Sends an event to one stream. */
  send(res: Response, event: string, data: unknown): void {
    this.#write(res, frame(event, data));
  }

  /** Sends an event to every stream. */
  broadcast(event: string, data: unknown): void {
    if (this.#open.size === 0) return;
    const text = frame(event, data);
    for (const res of this.#open) this.#write(res, text);
  }

  #write(res: Response, text: string): void {
    if (!this.#open.has(res)) return;
    res.write(text);
    // What the socket could not take yet waits in memory: past the bound, the client is
    // not reading, and the connection goes.
    if (res.writableLength > this.options.maxBufferedBytes) {
      this.#close(res);
      res.destroy();
    }
  }

  #close(res: Response): void {
    if (!this.#open.delete(res)) return;
    if (this.#open.size === 0) this.options.onLast?.();
  }
}
