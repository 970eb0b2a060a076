/**
 * Plain HTTP to a demo with any Host header (fetch does not let a caller choose it), and a
 * reader of its Server-Sent Events stream: what the demo tests use to act as a browser, or
 * as another site's page, would.
 */
import { request } from 'node:http';

/** An answer: status, headers and the body as text. */
export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** What a request sends besides its path. */
export interface RawRequest {
  method?: string;
  /** The Host header; by default `127.0.0.1:<port>`. */
  host?: string;
  headers?: Record<string, string>;
  body?: string;
}

/** One request to the demo on `port`; an event stream's answer is read for 500 ms, then cut. */
export function raw(port: number, path: string, options: RawRequest = {}): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path, method: options.method ?? 'GET', headers: { host: options.host ?? `127.0.0.1:${port}`, ...options.headers } },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        const done = () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
        res.on('end', done);
        if (res.headers['content-type']?.startsWith('text/event-stream')) {
          setTimeout(() => {
            res.destroy();
            done();
          }, 500);
        }
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

/** One event of a stream: its name and its data, parsed. */
export interface StreamEvent {
  event: string;
  data: unknown;
}

/**
 * Reads the demo's `/demo/events` until `until` accepts an event (resolving with it), or
 * rejects after `timeoutMs`.
 */
export function waitForStreamEvent(port: number, until: (event: StreamEvent) => boolean, timeoutMs = 15_000): Promise<StreamEvent> {
  return new Promise((resolve, reject) => {
    let buffer = '';
    const req = request({ host: '127.0.0.1', port, path: '/demo/events', headers: { host: `127.0.0.1:${port}` } }, (res) => {
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = /^event: (.*)$/m.exec(frame)?.[1] ?? 'message';
          const data = /^data: (.*)$/m.exec(frame)?.[1];
          const parsed = { event, data: data === undefined ? undefined : (JSON.parse(data) as unknown) };
          if (until(parsed)) {
            clearTimeout(timer);
            req.destroy();
            resolve(parsed);
            return;
          }
        }
      });
    });
    const timer = setTimeout(() => {
      req.destroy();
      reject(new Error(`no such event on /demo/events within ${timeoutMs} ms`));
    }, timeoutMs);
    req.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    req.end();
  });
}
