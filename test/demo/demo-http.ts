/**
 * Plain HTTP to a demo with any Host header (fetch does not let a caller choose it): what
 * the demo tests use to act as a browser, or as another site's page, would.
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

/** One request to the demo on `port`. */
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
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}
