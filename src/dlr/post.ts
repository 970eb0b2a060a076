/**
 * One delivery report attempt: a single HTTP(S) POST that never follows a redirect and
 * never reaches an address the guard blocks.
 *
 * The host name is resolved by our own `lookup`, which checks every address it gets and
 * hands only checked ones to the socket: the address checked is the address dialled, so
 * a name that resolves to a public address for the check and an internal one for the
 * connection (DNS rebinding) cannot get through. A reused keep-alive socket was connected
 * to a checked address too.
 *
 * The requests go through undici, Node's own HTTP client library (its dispatch API: see
 * `post`), not `node:http`: a report costs about a third of the CPU there (35-40 against
 * 100-120 us on one core, keep-alive to a local receiver), and reports are one request per
 * message.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import type { LookupFunction } from 'node:net';
import type { Agent, Dispatcher } from 'undici';
import { addressProblem, callbackUrlProblem, type AddressAllowance } from './address-guard.js';
import { callbackTarget } from './callback-target.js';
import { DEFAULT_TIMEOUT_MS, USER_AGENT, type HostResolver } from './options.js';

/** At most this much of a response body is read; it is discarded either way. */
export const MAX_RESPONSE_BYTES = 64 * 1024;

/** What one report attempt sends, and how. */
export interface PostRequest {
  /** Where to. Checked with `callbackUrlProblem` again before anything is sent. */
  url: string;
  /** The exact body; it is sent as UTF-8 and must be what was signed. */
  body: string;
  /** Extra headers (`webhook-id`, `webhook-timestamp`, `webhook-signature`). */
  headers?: Readonly<Record<string, string>>;
  /** Total time allowed, ms. Default {@link DEFAULT_TIMEOUT_MS}. */
  timeoutMs?: number;
  /** The `user-agent` header; default {@link USER_AGENT}. */
  userAgent?: string;
  /** The wall clock, epoch ms, for `Retry-After` dates; default `Date.now`. */
  now?: () => number;
}

/** Where a {@link CallbackSender} may send, and how it finds addresses. */
export interface SenderOptions {
  /** Which internal addresses are allowed anyway. */
  allow: AddressAllowance;
  /** How host names are resolved; default `dns.lookup` (tests map names to 127.0.0.1). */
  resolve?: HostResolver;
  /** Keep-alive connections per host (origin) at most. Default: no limit. */
  connectionsPerHost?: number;
}

/** What one attempt came to. It never throws: every failure is described here. */
export interface PostResult {
  /** The HTTP status answered, or `null` when no answer came (error, timeout, blocked). */
  statusCode: number | null;
  /** Why it failed: network error, timeout, blocked address, redirect; else `null`. */
  error: string | null;
  /** How long the attempt took, ms. */
  durationMs: number;
  /** The wait the receiver asked for in `Retry-After`, ms, if it sent a valid one. */
  retryAfterMs: number | null;
}

/** A resolved address the guard refused; reported as `blocked: ...`. */
class BlockedAddressError extends Error {
  readonly code = 'EBLOCKED';
}

const defaultResolve: HostResolver = (hostname) =>
  new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) => {
      if (error) reject(error);
      else resolve(addresses);
    });
  });

/**
 * A `lookup` for the socket: resolves with `resolve`, refuses the name if any of its
 * addresses is blocked (a name with one internal address is not trusted with the others),
 * and passes on only addresses it has checked.
 */
function guardedLookup(resolve: HostResolver, allow: AddressAllowance): LookupFunction {
  return (hostname: string, options: LookupOptions, callback) => {
    resolve(hostname).then(
      (resolved) => {
        const wanted = options.family;
        const family = wanted === 4 || wanted === 'IPv4' ? 4 : wanted === 6 || wanted === 'IPv6' ? 6 : 0;
        const addresses = resolved.filter((a) => family === 0 || a.family === family);
        if (addresses.length === 0) {
          callback(Object.assign(new Error(`no address found for ${hostname}`), { code: 'ENOTFOUND' }), '', 0);
          return;
        }
        for (const { address } of addresses) {
          const problem = addressProblem(address, allow);
          if (problem !== null) {
            callback(new BlockedAddressError(`${hostname} resolves to ${problem}`), '', 0);
            return;
          }
        }
        if (options.all) callback(null, addresses.map((a) => ({ ...a })));
        else callback(null, addresses[0]!.address, addresses[0]!.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, '', 0),
    );
  };
}

/**
 * Parses a `Retry-After` value (delay seconds or an HTTP date) into ms from `now`, or
 * `null` when absent or unreadable. A date in the past gives 0.
 */
export function parseRetryAfter(value: string | undefined, now: number): number | null {
  if (value === undefined) return null;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  if (!/[a-z]/i.test(text)) return null;
  const date = Date.parse(text);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

function describe(error: unknown): string {
  if (error instanceof BlockedAddressError) return `blocked: ${error.message}`;
  if (error instanceof Error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code !== undefined && !error.message.includes(code) ? `${code}: ${error.message}` : error.message;
  }
  return String(error);
}

/**
 * Sends delivery reports over keep-alive connections that dial only addresses its guard
 * allows. One per dispatcher; {@link CallbackSender.close} ends its connections.
 */
export class CallbackSender {
  readonly #options: SenderOptions;
  #agent: Promise<Agent> | null = null;

  constructor(options: SenderOptions) {
    this.#options = options;
  }

  /**
   * The connection pool, made for the first report: loading undici (its HTTP parser is
   * WebAssembly) adds ~18 MiB to the process, which a gateway whose customers give no
   * callback URL need not carry.
   */
  #pool(): Promise<Agent> {
    const { allow, resolve, connectionsPerHost } = this.#options;
    return (this.#agent ??= import('undici').then(
      ({ Agent }) =>
        new Agent({
          connections: connectionsPerHost ?? null,
          // undici hands these to `net.connect` / `tls.connect`: every new connection
          // resolves its host through the guard. (A literal IP never reaches `lookup`;
          // `post` checks it.)
          connect: { lookup: guardedLookup(resolve ?? defaultResolve, allow) },
        }),
    ));
  }

  /**
   * Sends one POST of `body` to `url` and reports what happened; never rejects.
   *
   * Redirects are not followed (a 3xx is returned with an error saying so). The timeout
   * covers the whole exchange; once a status line has arrived, the status is reported even
   * if reading the body then fails, since the receiver has already answered.
   */
  post(request: PostRequest): Promise<PostResult> {
    const started = performance.now();
    const timeoutMs = request.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const now = request.now ?? Date.now;
    return new Promise<PostResult>((resolve) => {
      let settled = false;
      let timer: NodeJS.Timeout | undefined;
      const finish = (statusCode: number | null, error: string | null, retryAfterMs: number | null): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve({ statusCode, error, durationMs: Math.round(performance.now() - started), retryAfterMs });
      };

      const problem = callbackUrlProblem(request.url, this.#options.allow);
      if (problem !== null) {
        finish(null, `blocked: callback URL ${problem}`, null);
        return;
      }
      // A URL the guard passed is an absolute URL, so it parses.
      const { origin, path } = callbackTarget(request.url)!;
      // Once the status line is in, the receiver has answered: a body that then fails or
      // dawdles past the timeout does not turn that answer into "no answer".
      let answered: { statusCode: number; error: string | null; retryAfterMs: number | null } | null = null;
      const answer = (): void => finish(answered!.statusCode, answered!.error, answered!.retryAfterMs);
      // The request's controller, once undici starts the request; a timeout before then
      // aborts it as soon as it starts.
      let controller: Dispatcher.DispatchController | null = null;
      let timedOut: Error | null = null;
      let received = 0;

      timer = setTimeout(() => {
        const why = `timed out after ${timeoutMs} ms`;
        if (answered !== null) answer();
        else finish(null, why, null);
        timedOut = new Error(why);
        controller?.abort(timedOut);
      }, timeoutMs);
      timer.unref();

      // undici's dispatch API rather than `request()`: no response stream, promise or
      // header object per report, which together cost about a fifth of a report's CPU.
      const handler: Dispatcher.DispatchHandler = {
        onRequestStart: (started) => {
          controller = started;
          if (timedOut !== null) started.abort(timedOut);
        },
        onResponseStart: (_started, statusCode, headers) => {
          const redirected = statusCode >= 300 && statusCode < 400;
          const header = headers['retry-after'];
          answered = {
            statusCode,
            error: redirected ? `redirect not followed (HTTP ${statusCode})` : null,
            retryAfterMs: parseRetryAfter(Array.isArray(header) ? header[0] : header, now()),
          };
        },
        // Read (and drop) the body so the connection can serve the next report, but no
        // more of it than MAX_RESPONSE_BYTES.
        onResponseData: (started, chunk) => {
          received += chunk.length;
          if (received > MAX_RESPONSE_BYTES) {
            answer();
            started.abort(new Error('response body too large'));
          }
        },
        onResponseEnd: () => answer(),
        onResponseError: (_started, error) => {
          if (answered !== null) answer();
          else finish(null, describe(error), null);
        },
      };

      this.#pool().then(
        (agent) => {
          // Timed out while undici loaded: the attempt has ended, so nothing may be sent now.
          if (settled) return;
          try {
            agent.dispatch(
              {
                origin,
                path,
                method: 'POST',
                headers: { 'content-type': 'application/json', 'user-agent': request.userAgent ?? USER_AGENT, ...request.headers },
                body: request.body,
                headersTimeout: timeoutMs,
                bodyTimeout: timeoutMs,
              },
              handler,
            );
          } catch (error) {
            // Options undici refuses (a header value it cannot send, say): nothing was sent.
            finish(null, describe(error), null);
          }
        },
        (error: unknown) => finish(null, describe(error), null),
      );
    });
  }

  /** Ends every connection; attempts still running fail. */
  async close(): Promise<void> {
    if (this.#agent !== null) await (await this.#agent).destroy();
  }
}

/**
 * Sends one POST with a sender of its own, whose connection is closed afterwards: for a
 * single attempt, or a test. The dispatcher keeps one {@link CallbackSender} instead.
 */
export async function postCallback(request: PostRequest & SenderOptions): Promise<PostResult> {
  const sender = new CallbackSender(request);
  try {
    return await sender.post(request);
  } finally {
    await sender.close();
  }
}
