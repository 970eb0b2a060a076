/**
 * The `logger` option: turns the router's events into log lines on a pino-style logger
 * (`logger.info(obj, msg)`), so a host gets useful logs without writing listeners.
 */
import { inspect } from 'node:util';
import type { ErrorEvent, RequestId, SmsEventEmitter, SmsEventName, SmsEvents } from './events.js';
import { isTerminal } from '../lifecycle/states.js';
import type { LogMethod, SmsLogger } from './options.js';

/** The URL without query or fragment: a receiver's query string may carry its own token. */
function safeUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    return '(invalid url)';
  }
}

/** Characters that would let logged text start a line of its own, or restyle or reorder a terminal's output. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const NAMED_ESCAPES: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/**
 * `text` with every control character written as an escape (`\n`, `\x1b` as `\u001b`, the
 * Unicode line separators and bidirectional overrides alike), so that text a client or a
 * carrier sent cannot forge a log line of its own or hide part of one.
 */
export function escapeControl(text: string): string {
  return text.replace(CONTROL, (c) => NAMED_ESCAPES[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** The value of every line's `module` field: where the line comes from in the host's logs. */
export const LOG_MODULE = 'sms-outbox';

/** What {@link attachLogger} returns. */
export interface AttachedLogger {
  /** Logs at info that storage is ready: a start-up step no event reports. */
  storageReady(storage: object, durationMs: number): void;
  /** Unsubscribes from the events. */
  detach(): void;
}

/** `method` bound to `logger` (pino's methods read `this`), each line led by `module`. */
function lines(logger: SmsLogger, method: LogMethod): LogMethod;
function lines(logger: SmsLogger, method: LogMethod | undefined): LogMethod | undefined;
function lines(logger: SmsLogger, method: LogMethod | undefined): LogMethod | undefined {
  if (method === undefined) return undefined;
  const bound = method.bind(logger);
  // The object's strings are the logger's to quote (pino writes JSON); the message is
  // printed as it is by console-style loggers.
  return (obj, msg) => bound({ module: LOG_MODULE, ...obj }, escapeControl(msg));
}

/** `{ reqId }` when the event carries the host's request id (pino-http's field name), else nothing. */
function reqId(requestId: RequestId | undefined): { reqId?: RequestId } {
  return requestId === undefined ? {} : { reqId: requestId };
}

/**
 * Subscribes `logger` to `events`. Each line carries `module: 'sms-outbox'`, `event` and
 * the ids needed to follow a message (`ref`, `principalId`, `externalId`) or a request
 * (`reqId`, the host's `req.id`), never a message's text, recipient number or signing secret.
 */
export function attachLogger(events: SmsEventEmitter, logger: SmsLogger): AttachedLogger {
  const info = lines(logger, logger.info);
  const warn = lines(logger, logger.warn);
  const error = lines(logger, logger.error);
  const debug = lines(logger, logger.debug);
  const detach: (() => void)[] = [];
  const on = <K extends SmsEventName>(name: K, listener: SmsEvents[K]): void => {
    events.on(name, listener as never);
    detach.push(() => events.off(name, listener as never));
  };

  if (debug) {
    on('message.accepted', ({ message: m, requestId }) =>
      debug(
        {
          event: 'message.accepted', ref: m.ref, principalId: m.principalId, externalId: m.externalId, endpoint: m.endpoint, smsCount: m.smsCount,
          ...reqId(requestId),
        },
        'sms accepted',
      ),
    );
    on('message.submitted', ({ message: m }) =>
      debug({ event: 'message.submitted', ref: m.ref, principalId: m.principalId, parts: m.smsCount }, 'sms submitted to the carrier'),
    );
    on('dlr.sent', (e) =>
      debug(
        { event: 'dlr.sent', uid: e.uid, ref: e.message.ref, url: safeUrl(e.url), attempt: e.attempt, statusCode: e.statusCode, durationMs: e.durationMs },
        'delivery report sent',
      ),
    );
  }
  on('message.status', ({ message: m, previousState }) => {
    const line = { event: 'message.status', ref: m.ref, principalId: m.principalId, externalId: m.externalId, state: m.state, previousState, reason: m.statusReason };
    if (isTerminal(m.state)) info(line, `sms ${m.state}`);
    else debug?.(line, `sms ${m.state}`);
  });
  on('message.retrying', (e) =>
    warn({ event: 'message.retrying', ref: e.ref, attempt: e.attempt, nextAttemptAt: e.nextAttemptAt, err: e.error }, 'carrier error, submission will be retried'),
  );
  on('message.inbound', (m) => info({ event: 'message.inbound', to: m.to, receivedAt: m.receivedAt }, 'inbound sms'));
  on('credit.charged', (e) => debug?.({ event: 'credit.charged', principalId: e.principalId, profileCode: e.profileCode, units: e.units, messages: e.messages.length }, 'credit charged'));
  on('credit.refunded', (e) => info({ event: 'credit.refunded', principalId: e.principalId, units: e.units, cause: e.cause, refs: e.messages.map((m) => m.ref) }, 'credit refunded'));
  on('dlr.retrying', (e) =>
    warn(
      { event: 'dlr.retrying', uid: e.uid, ref: e.message.ref, url: safeUrl(e.url), attempt: e.attempt, statusCode: e.statusCode, reason: e.error, nextAttemptAt: e.nextAttemptAt },
      'delivery report failed, will retry',
    ),
  );
  on('dlr.failed', (e) =>
    warn(
      { event: 'dlr.failed', uid: e.uid, ref: e.message.ref, url: safeUrl(e.url), attempt: e.attempt, statusCode: e.statusCode, reason: e.error },
      'delivery report given up',
    ),
  );
  on('callback.endpoint_paused', (e) =>
    warn({ event: 'callback.endpoint_paused', url: safeUrl(e.url), failingSince: e.failingSince }, 'callback URL paused: it failed for dlr.pauseAfterMs'),
  );
  on('callback.endpoint_resumed', (e) => info({ event: 'callback.endpoint_resumed', url: safeUrl(e.url), by: e.by }, 'callback URL resumed'));
  on('inbound.retrying', (e) =>
    warn(
      { event: 'inbound.retrying', uid: e.uid, ref: e.inbound.ref, url: safeUrl(e.url), attempt: e.attempt, statusCode: e.statusCode, reason: e.error, nextAttemptAt: e.nextAttemptAt },
      'inbound webhook failed, will retry',
    ),
  );
  on('inbound.failed', (e) =>
    warn({ event: 'inbound.failed', uid: e.uid, ref: e.inbound.ref, url: safeUrl(e.url), attempt: e.attempt, statusCode: e.statusCode, reason: e.error }, 'inbound webhook given up'),
  );
  on('subscriber.opted_out', (e) => info({ event: 'subscriber.opted_out', shortCode: e.shortCode, source: e.source }, 'subscriber opted out'));
  on('subscriber.opted_in', (e) => info({ event: 'subscriber.opted_in', shortCode: e.shortCode, source: e.source }, 'subscriber opted in'));
  // A 4xx is the client's mistake, not the operator's: a line each at info would let one
  // misconfigured client, or a burst of bad keys, flood the host's logs. Its rate is
  // `sms_outbox_requests_rejected_total`, the place for an alert. A refusal for the
  // gateway's own state (503: the backlog is full) is the operator's to act on.
  on('request.rejected', (e) => {
    const line = { event: 'request.rejected', status: e.status, details: e.details, endpoint: e.endpoint, principalId: e.principalId, ip: e.ip, ...reqId(e.requestId) };
    if (e.status >= 500) warn(line, `request refused: ${e.status}`);
    else debug?.(line, `request rejected: ${e.status}`);
  });
  // Debug for the same reason: a client retrying on a rotated-out key would flood the logs.
  on('key.expired', (e) =>
    debug?.({ event: 'key.expired', principalId: e.principalId, expiresAt: e.expiresAt, endpoint: e.endpoint, ip: e.ip, ...reqId(e.requestId) }, 'expired API key refused'),
  );
  // Once per principal and period: the operator may want to raise the cap before it bites.
  on('spend_cap.warning', (e) =>
    warn({ event: 'spend_cap.warning', principalId: e.principalId, period: e.period, units: e.units, limit: e.limit, resetsAt: e.resetsAt }, `spend cap at ${e.units} of ${e.limit} units`),
  );
  // A data-subject request: the record that it was done, naming the number only by its hash.
  on('subscriber.erased', ({ startedAt, endedAt, ...summary }) => info({ event: 'subscriber.erased', ...summary, durationMs: endedAt - startedAt }, 'subscriber erased'));
  // An outage is one error line, its retries debug lines, and the way back one info line.
  on('carrier.connection', (c) => {
    const line = { event: 'carrier.connection', ...(c.route === undefined ? {} : { route: c.route }), bind: c.bind, state: c.state };
    const name = c.route === undefined ? c.bind : `${c.route}/${c.bind}`;
    if (c.state === 'bound') {
      info({ ...line, reconnect: c.reconnect }, c.reconnect ? `carrier ${name} bound again` : `carrier ${name} bound`);
      return;
    }
    const down = { ...line, attempt: c.attempt, retryInMs: c.retryInMs, err: c.error };
    if (c.attempt <= 1) error(down, `carrier ${name} down; reconnecting`);
    else debug?.(down, `carrier ${name} reconnect ${c.attempt} failed`);
  });
  on('carrier.route', (r) => {
    if (r.state === 'up') {
      info({ event: 'carrier.route', route: r.route, state: r.state }, `route ${r.route} up`);
      return;
    }
    const where = r.via === null || r.via === undefined ? 'no fallback is up' : `its messages go to ${r.via}`;
    warn({ event: 'carrier.route', route: r.route, state: r.state, reason: r.reason, via: r.via }, `route ${r.route} down (${r.reason}); ${where}`);
  });
  // `err` is the key pino's standard serializer prints with its stack. A connection's
  // failure is logged above, from its `carrier.connection` event.
  on('error', (e) => {
    if (e.bind !== undefined) return;
    error({ event: 'error', source: e.source, ref: e.ref, ...reqId(e.requestId), err: e.error }, `sms-outbox ${e.source} error`);
  });

  return {
    storageReady: (storage, durationMs) =>
      info({ event: 'storage.ready', storage: storage.constructor.name, durationMs: Math.round(durationMs) }, 'storage ready'),
    detach: () => {
      for (const off of detach.splice(0)) off();
    },
  };
}


/** Options of {@link unheardErrorWriter}. */
export interface UnheardErrorWriterOptions {
  /** Writes one line (ending in a newline). Default: `process.stderr.write`. */
  write?: (line: string) => void;
  /** The clock, epoch ms. Default `Date.now`. */
  now?: () => number;
  /** Error lines written per interval at most. Default 10. */
  maxLines?: number;
  /** The interval, ms. Default 60,000. */
  intervalMs?: number;
}

/** Longest error line written; a driver's error can quote a whole statement. */
const MAX_LINE = 1000;

/** One line: error name and message, and its cause's, without newlines or stack. */
function describeError(error: unknown): string {
  const one = (value: unknown): string =>
    value instanceof Error ? `${value.name}: ${value.message}` : inspect(value, { depth: 1, breakLength: Infinity });
  let text = one(error);
  const cause: unknown = error instanceof Error ? error.cause : undefined;
  if (cause !== undefined) text += ` (cause: ${one(cause)})`;
  text = escapeControl(text.replace(/\s*[\r\n]+\s*/g, ' '));
  return text.length > MAX_LINE ? `${text.slice(0, MAX_LINE)}...` : text;
}

/**
 * What the router does with an `error` event when the host neither listens to `error` nor
 * passed a `logger`: write it to stderr, one line each (`sms-outbox error [storage]: ...`),
 * so that a failing database is not silent. At most `maxLines` a `intervalMs`: an outage
 * fails every request, and a line per request would flood the host's logs and cost I/O
 * while it lasts. The first error past the limit writes one notice; the first one written
 * after the interval is preceded by the count of those left out. No timer: nothing keeps
 * the process alive or needs closing.
 */
export function unheardErrorWriter(options: UnheardErrorWriterOptions = {}): (event: ErrorEvent) => void {
  const write = options.write ?? ((line: string) => void process.stderr.write(line));
  const now = options.now ?? Date.now;
  const maxLines = options.maxLines ?? 10;
  const intervalMs = options.intervalMs ?? 60_000;
  let windowStart = -Infinity;
  let written = 0;
  let skipped = 0;
  return (event) => {
    const at = now();
    if (at - windowStart >= intervalMs) {
      if (skipped > 0) write(`sms-outbox: ${skipped} more ${skipped === 1 ? 'error was' : 'errors were'} not written\n`);
      windowStart = at;
      written = 0;
      skipped = 0;
    }
    if (written < maxLines) {
      written += 1;
      const ref = event.ref === undefined ? '' : ` ref=${escapeControl(event.ref)}`;
      write(`sms-outbox error [${escapeControl(event.source)}]${ref}: ${describeError(event.error)}\n`);
      return;
    }
    if (skipped === 0) {
      write(
        `sms-outbox: more than ${maxLines} errors in ${intervalMs / 1000} s; the next are counted, not written, until ${new Date(windowStart + intervalMs).toISOString()}. ` +
          'Listen to `error` or pass a `logger` to get every one\n',
      );
    }
    skipped += 1;
  };
}
