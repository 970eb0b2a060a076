/**
 * The fuzz tests' gateway: the router on a real listening server (keep-alive client for
 * speed), its storage wrapped to record every insert, and the check every answer must
 * pass. Shared by `test/fuzz/*.test.ts` and `scripts/fuzz-long.ts`.
 */
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { MemoryStorage, type SmsRouterOptions, type Storage } from '../../src/index.js';
import { createGateway, DISABLED_KEY, KEY, OTHER_KEY, QUICK_ONLY_KEY, type TestGateway } from '../helpers/gateway.js';
import { ScriptedDelivery } from '../helpers/scripted-delivery.js';
import { leakProblem } from '../helpers/no-leak.js';

/** Every status the package documents. A client may never see another one from the router. */
export const DOCUMENTED_STATUSES: ReadonlySet<number> = new Set([200, 400, 401, 403, 404, 413, 415, 422, 429]);

/** Keys a fuzz case may use: one good for everything, and each kind of refusal. */
export const FUZZ_KEYS = [KEY, KEY, KEY, QUICK_ONLY_KEY, DISABLED_KEY, OTHER_KEY] as const;

/** The body size limit of the fuzz gateway: small, so 413 is reached often and cheaply. */
export const FUZZ_MAX_BODY_BYTES = 64 * 1024;

/** One request as the fuzzers describe it. */
export interface FuzzRequest {
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string | undefined>;
  body?: string | Buffer;
}

/** One answer. */
export interface FuzzAnswer {
  status: number;
  contentType: string | undefined;
  text: string;
}

/** A running fuzz gateway. */
export interface FuzzGateway extends TestGateway {
  origin: string;
  port: number;
  /** The message count of every `insertMessages` call, in order (counts only: long runs stay small). */
  inserts: number[];
  /** Every `error` event of source `request` (a 500's cause). */
  requestErrors: unknown[];
  /** Sends one request over the keep-alive agent. */
  send(request: FuzzRequest): Promise<FuzzAnswer>;
  close(): Promise<void>;
}

/**
 * Starts the router on 127.0.0.1 with an instant carrier and its storage (`options.storage`,
 * default a new MemoryStorage) wrapped to record every insert.
 */
export async function startFuzzGateway(
  options: Partial<SmsRouterOptions> = {},
  { awaitReady = true }: { awaitReady?: boolean } = {},
): Promise<FuzzGateway> {
  const storage = (options.storage as Storage | undefined) ?? new MemoryStorage();
  const inserts: number[] = [];
  const insert = storage.insertMessages.bind(storage);
  storage.insertMessages = async (messages, lease) => {
    inserts.push(messages.length);
    return insert(messages, lease);
  };
  const gateway = createGateway({
    delivery: new ScriptedDelivery(),
    limits: { maxBodyBytes: FUZZ_MAX_BODY_BYTES, maxMessagesPerRequest: 1000, maxSegments: 10 },
    retention: false,
    // Off unless a test turns them on: with them, most cases would stop at 429.
    rateLimit: false,
    ...options,
    storage,
  });
  const requestErrors: unknown[] = [];
  gateway.sms.on('error', ({ error, source }) => {
    if (source === 'request') requestErrors.push(error);
  });
  const server = http.createServer(gateway.app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
  if (awaitReady) await gateway.sms.ready();

  const send = (request: FuzzRequest): Promise<FuzzAnswer> =>
    new Promise((resolve, reject) => {
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(request.headers)) if (value !== undefined) headers[name] = value;
      const body = request.body === undefined ? undefined : Buffer.isBuffer(request.body) ? request.body : Buffer.from(request.body, 'utf8');
      if (body !== undefined && headers['content-length'] === undefined && headers['transfer-encoding'] === undefined) {
        headers['content-length'] = String(body.length);
      }
      const outgoing = http.request({ host: '127.0.0.1', port, method: request.method, path: request.path, headers, agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, contentType: res.headers['content-type'], text: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      });
      outgoing.on('error', reject);
      outgoing.end(body);
    });

  return {
    ...gateway,
    origin: `http://127.0.0.1:${port}`,
    port,
    inserts,
    requestErrors,
    send,
    close: async () => {
      agent.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await gateway.sms.close();
    },
  };
}

/**
 * Throws unless `answer` is one a client may see: a documented status; for an error, a JSON
 * `{ "details", "code" }` body (a registry code of that status) that leaks nothing and no insert made for it; for a send's 200,
 * exactly one insert with one message per answered item; and no 500 cause reported.
 */
export function checkAnswer(gateway: FuzzGateway, request: FuzzRequest, answer: FuzzAnswer, insertsBefore: number, errorsBefore: number): void {
  const where = () => `${request.method} ${request.path} -> ${answer.status} ${answer.text.slice(0, 300)}`;
  if (gateway.requestErrors.length > errorsBefore) {
    throw new Error(`request caused an error event (${String(gateway.requestErrors[gateway.requestErrors.length - 1])}): ${where()}`);
  }
  if (!DOCUMENTED_STATUSES.has(answer.status)) throw new Error(`undocumented status: ${where()}`);
  const newInserts = gateway.inserts.length - insertsBefore;
  if (answer.status !== 200) {
    if (!/^application\/json/.test(answer.contentType ?? '')) throw new Error(`error answer is not JSON (${answer.contentType}): ${where()}`);
    const problem = leakProblem(answer.text, answer.status);
    if (problem !== null) throw new Error(`${problem}: ${where()}`);
    if (newInserts !== 0) throw new Error(`a rejected request stored ${newInserts} batch(es): ${where()}`);
    return;
  }
  const parsed: unknown = JSON.parse(answer.text);
  if (request.method === 'POST') {
    if (!Array.isArray(parsed) || parsed.length === 0) throw new Error(`200 body is not a non-empty array: ${where()}`);
    if (newInserts !== 1) throw new Error(`a 200 made ${newInserts} inserts: ${where()}`);
    const stored = gateway.inserts[gateway.inserts.length - 1]!;
    if (stored !== parsed.length) throw new Error(`answered ${parsed.length} items but stored ${stored}: ${where()}`);
  } else if (newInserts !== 0) {
    throw new Error(`a GET stored something: ${where()}`);
  }
}

/** Sends `request` and checks its answer (see {@link checkAnswer}). */
export async function sendAndCheck(gateway: FuzzGateway, request: FuzzRequest): Promise<FuzzAnswer> {
  const insertsBefore = gateway.inserts.length;
  const errorsBefore = gateway.requestErrors.length;
  const answer = await gateway.send(request);
  checkAnswer(gateway, request, answer, insertsBefore, errorsBefore);
  return answer;
}

/** One HTTP response parsed off a raw socket. */
export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Writes `bytes` on a fresh TCP connection (then half-closes it when `end` is set) and
 * parses every response that comes back until the server closes or `timeoutMs` passes.
 */
export function rawExchange(port: number, bytes: Buffer, options: { end: boolean; timeoutMs?: number }): Promise<RawResponse[]> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => socket.destroy(), options.timeoutMs ?? 2000);
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      // Without a half-close the server keeps the connection open: stop once every answer is in.
      if (!options.end && parseResponses(Buffer.concat(chunks)).complete) socket.end();
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      try {
        resolve(parseResponses(Buffer.concat(chunks)).responses);
      } catch (error) {
        reject(error);
      }
    });
    socket.write(bytes);
    if (options.end) socket.end();
  });
}

/** Parses concatenated HTTP/1.1 responses, skipping 1xx; `complete` when the last one is whole. */
function parseResponses(data: Buffer): { responses: RawResponse[]; complete: boolean } {
  const responses: RawResponse[] = [];
  let at = 0;
  while (at < data.length) {
    const headEnd = data.indexOf('\r\n\r\n', at);
    if (headEnd === -1) return { responses, complete: false };
    const lines = data.subarray(at, headEnd).toString('latin1').split('\r\n');
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '')?.[1] ?? NaN);
    const headers: Record<string, string> = {};
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const length = Number(headers['content-length'] ?? 0);
    if (data.length < headEnd + 4 + length) return { responses, complete: false };
    // An interim answer (100 Continue) is not the answer.
    if (status >= 200) responses.push({ status, headers, body: data.subarray(headEnd + 4, headEnd + 4 + length).toString('utf8') });
    at = headEnd + 4 + length;
  }
  return { responses, complete: responses.length > 0 };
}
