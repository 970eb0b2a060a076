/**
 * The API client side of the e2e tests: concurrent senders of quick-send requests that
 * keep what was acknowledged (a 200 whose body was read in full), and status lookups.
 */
import { isTerminal } from '../../src/lifecycle/states.js';
import { eventually, PollTimeout } from '../helpers/poll.js';
import { HOST_KEY, HOST_PROFILE } from './host-process.js';

/** A message acknowledged with 200. */
export interface AckedMessage {
  /** `message_ref` from the 200 body. */
  ref: string;
  /** The request's `external_id` (one per request, shared by its messages). */
  externalId: string;
  /** Whether its request had a `dlr_callback_url`. */
  hasCallback: boolean;
  /** `sms_count` from the 200 body: the parts the carrier must accept. */
  smsCount: number;
}

/** The status endpoint's view of a message (the fields the tests read). */
export interface StatusItem {
  message_ref: string;
  status: string;
  status_reason: string | null;
  sms_count: number;
}

/** Texts of one to three parts, GSM-7 and UCS-2 (Cyrillic), so multipart messages crash mid-way too. */
const TEXTS = [
  'Hello from the e2e test',
  'Your code is 4711',
  `Long GSM text. ${'abcdefghij'.repeat(16)}`,
  '\u041f\u0440\u0438\u0432\u0435\u0442, \u043c\u0438\u0440',
  '\u041f\u0440\u0438\u0432\u0435\u0442 '.repeat(25),
] as const;

function pick<T>(items: readonly T[]): T {
  return items[Math.floor(Math.random() * items.length)]!;
}

function recipient(): string {
  return `2547${String(Math.floor(Math.random() * 1e8)).padStart(8, '0')}`;
}

/** A quick-send body with `count` messages sharing `externalId`. */
export function quickBody(count: number, externalId: string, callbackUrl: string | null, texts: readonly string[] = TEXTS): string {
  return JSON.stringify({
    profile_code: HOST_PROFILE,
    messages: Array.from({ length: count }, () => ({ recipient: recipient(), message: pick(texts), external_id: externalId })),
    ...(callbackUrl === null ? {} : { dlr_callback_url: callbackUrl }),
  });
}

/**
 * POSTs one quick-send body; resolves with the acked messages for a 200, throws for any
 * other status (the router must never answer these requests with an error) and for a
 * network error (the host was killed).
 */
export async function send(base: string, body: string, externalId: string, hasCallback: boolean): Promise<AckedMessage[]> {
  const res = await fetch(`${base}/create`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': HOST_KEY },
    body,
  });
  const text = await res.text();
  if (res.status !== 200) throw new UnexpectedStatus(res.status, text);
  const items = JSON.parse(text) as { message_ref: string; sms_count: number }[];
  return items.map((item) => ({ ref: item.message_ref, externalId, hasCallback, smsCount: item.sms_count }));
}

/** A send answered with something other than 200: a failure of the router, not of the network. */
export class UnexpectedStatus extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
  ) {
    super(`unexpected HTTP ${status}: ${body}`);
  }
}

/** Options of {@link runSenders}. */
export interface SendersOptions {
  /** `http://127.0.0.1:<port>/api/outbox` */
  base: string;
  /** Concurrent senders. */
  clients: number;
  /** The DLR receiver's URL. */
  callbackUrl: string;
  /** Share of requests (0 to 1) that carry `callbackUrl`. */
  callbackShare: number;
  /** Called after each acknowledged request with the running total of acked messages. */
  onAck?: (total: number) => void;
  /** Senders stop by themselves after this long, ms. */
  deadlineMs: number;
}

/** What the senders did. */
export interface SendersResult {
  /** Every acked message, in ack order. */
  acked: AckedMessage[];
  /** Non-200 answers (each a router failure). */
  unexpected: UnexpectedStatus[];
  /** Requests that failed on the network (expected once the host is killed). */
  networkErrors: number;
}

/**
 * Runs `clients` senders, each posting requests of 1 to 10 messages one after another
 * until the host goes away, `stop()` is called, or the deadline passes.
 */
export function runSenders(options: SendersOptions): { done: Promise<SendersResult>; stop(): void } {
  const result: SendersResult = { acked: [], unexpected: [], networkErrors: 0 };
  const deadline = Date.now() + options.deadlineMs;
  const run = `${Date.now().toString(36)}`;
  let stopped = false;
  const sender = async (client: number) => {
    for (let n = 0; !stopped && Date.now() < deadline; n++) {
      const externalId = `r-${run}-${client}-${n}`;
      const hasCallback = Math.random() < options.callbackShare;
      const body = quickBody(1 + Math.floor(Math.random() * 10), externalId, hasCallback ? options.callbackUrl : null);
      try {
        result.acked.push(...(await send(options.base, body, externalId, hasCallback)));
        options.onAck?.(result.acked.length);
      } catch (error) {
        if (error instanceof UnexpectedStatus) result.unexpected.push(error);
        else result.networkErrors++;
        return;
      }
    }
  };
  const done = Promise.all(Array.from({ length: options.clients }, (_, i) => sender(i))).then(() => result);
  return { done, stop: () => (stopped = true) };
}

/** The caller's messages with `externalId`, through `GET /delivery-status?external_id=`. */
export async function lookup(base: string, externalId: string): Promise<StatusItem[]> {
  const res = await fetch(`${base}/delivery-status?external_id=${encodeURIComponent(externalId)}`, {
    headers: { 'x-api-key': HOST_KEY },
  });
  const text = await res.text();
  if (res.status !== 200) throw new UnexpectedStatus(res.status, text);
  return JSON.parse(text) as StatusItem[];
}

/** Runs `task` over `items`, at most `width` at once. */
export async function forEachLimited<T>(items: readonly T[], width: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await task(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, lane));
}

/**
 * Reads every message's status (one lookup per external id, 8 at a time) until each is
 * terminal or `ms` have passed, and returns the last status seen of each. Running out of
 * time is not an error here: the caller's checks name each message that did not end.
 */
export async function statusesOnceEnded(base: string, messages: readonly AckedMessage[], ms: number): Promise<Map<string, StatusItem>> {
  const statuses = new Map<string, StatusItem>();
  const externalIds = [...new Set(messages.map((m) => m.externalId))];
  let open = externalIds;
  const countOpen = async (): Promise<number> => {
    await forEachLimited(open, 8, async (externalId) => {
      for (const item of await lookup(base, externalId)) statuses.set(item.message_ref, item);
    });
    const openIds = new Set(messages.filter((m) => !isTerminal(statuses.get(m.ref)?.status ?? 'queued')).map((m) => m.externalId));
    open = externalIds.filter((id) => openIds.has(id));
    return open.length;
  };
  await eventually(countOpen, { until: (n) => n === 0, timeoutMs: ms, intervalMs: 200, what: 'every message to end' }).catch((error: unknown) => {
    if (!(error instanceof PollTimeout)) throw error;
  });
  return statuses;
}
