/**
 * The demo host's dashboard routes: the page at `/`; a Server-Sent Events stream at
 * `/demo/events` of the newest messages, the last hour's counts, the queue and the carrier;
 * the older pages at `/demo/messages?page=2`; the search at `/demo/search?q=`; a simulated
 * subscriber's reply at `POST /demo/mo` (the stream then sends the inbound messages and
 * opt-outs); Prometheus metrics at `/metrics`; and an empty `/favicon.ico`, so a browser's
 * request for it is no 404.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import express, { type ErrorRequestHandler, type RequestHandler, type Router } from 'express';
import type { SmsRouter, Storage } from '../../src/index.js';
import { refuse } from '../errors.js';
import { CarrierView } from './carrier.js';
import { EventStreams } from './event-stream.js';
import { QueueView, type QueueSample } from './queue.js';
import { InboundView } from './inbound.js';
import { MessageLog, SEARCH_LIMIT, type MessagePage } from './recent.js';
import { HourStats, type HourCounts } from './stats.js';

/** What the dashboard needs from the demo host. */
export interface DashboardOptions {
  /** The router whose events feed the page. */
  sms: SmsRouter;
  /** The router's storage, read for the rows a page shows and for the search. */
  storage: Storage;
  /** The principal (the demo key's id) whose messages the search looks through. */
  principalId: string;
  /** The demo key, put into the page so its form can send. */
  apiKey: string;
  /** Where the router's endpoints are, as the page's form posts them. */
  basePath: string;
  /** The Prometheus text of `/metrics`, with its content type. */
  metrics: () => Promise<{ contentType: string; text: string }>;
  /** Has the simulated carrier deliver an MO message (`POST /demo/mo`); absent with a real SMSC. */
  simulateInbound?: (message: { from: string; to: string; text: string }) => Promise<void>;
  /** The carrier in words, for the page's carrier line: `simulated carrier`, or the SMSC's address. */
  carrier: string;
  /** Dashboard streams open at once. Default {@link MAX_STREAMS}. */
  maxStreams?: number;
  /** Bytes a stream's client may leave unread before it is disconnected. Default {@link MAX_BUFFERED_BYTES}. */
  maxBufferedBytes?: number;
}

/** Dashboard streams open at once, by default: a few pages for each person trying the demo. */
export const MAX_STREAMS = 10;

/**
 * Unread bytes past which a stream's client is disconnected, by default: more than the rows
 * of the largest request (a 1 MiB body) that reach a page in one burst, so a page that reads
 * is never cut; with {@link MAX_STREAMS}, what slow clients can hold is bounded at 40 MiB.
 */
export const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;

const PAGE = readFileSync(new URL('./page.html', import.meta.url), 'utf8');

/** Escapes text for an HTML attribute value. */
function attribute(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** What the page's counts line gets: the last hour, and how many messages the list holds. */
export interface StatsEvent extends HourCounts {
  /** How many messages the list holds, for the page count. */
  listed: number;
}

/** What `POST /demo/mo` takes, in its refusals' words. */
export const MO_BODY = '{ "from": 8 to 15 digits, "to": a short code, "text": not empty }';

/** A digest of a key, for comparing two keys in constant time whatever their lengths. */
function digest(key: string): Buffer {
  return createHash('sha256').update(key).digest();
}

/**
 * Refuses a request without the demo's key in `X-API-Key` (401, the package's codes): the
 * demo's endpoints that change something are as closed as the API.
 */
function requireKey(apiKey: string): RequestHandler {
  const expected = digest(apiKey);
  return (req, res, next) => {
    const given = req.headers['x-api-key'];
    if (typeof given !== 'string' || given === '') {
      res.set('WWW-Authenticate', 'ApiKey header="X-API-Key"');
      refuse(res, 'MISSING_API_KEY', 'Missing X-API-Key header');
      return;
    }
    if (!timingSafeEqual(digest(given), expected)) {
      res.set('WWW-Authenticate', 'ApiKey header="X-API-Key"');
      refuse(res, 'INVALID_API_KEY', 'Invalid API key');
      return;
    }
    next();
  };
}

/** A body `express.json` could not read: 400 `INVALID_JSON` (or 413), as the API answers. */
const bodyErrors: ErrorRequestHandler = (error: { type?: string }, _req, res, next) => {
  if (error.type === 'entity.parse.failed') refuse(res, 'INVALID_JSON', `Body is not valid JSON; give ${MO_BODY}`);
  else if (error.type === 'entity.too.large') refuse(res, 'BODY_TOO_LARGE', 'Body is larger than 8192 bytes');
  else next(error);
};

/** The longest search text: a ref is 36 characters, an external id at most 128. */
const MAX_QUERY = 200;

/** `?page=`: absent is 1; else a whole number from 1, or `null` when it is not one. */
function pageParam(value: unknown): number | null {
  if (value === undefined) return 1;
  return typeof value === 'string' && /^[1-9][0-9]{0,8}$/.test(value) ? Number(value) : null;
}

/**
 * Returns the dashboard's routes.
 *
 * The API key is written into the page: acceptable only because this is a local demo
 * whose key the console prints anyway. A real host must never hand a key to a browser;
 * its own back end would call the send API.
 */
export function dashboardRoutes(options: DashboardOptions): Router {
  const log = new MessageLog(options.sms, options.storage);
  const stats = new HourStats(options.sms);
  const statsEvent = (counts: HourCounts): StatsEvent => ({ ...counts, listed: log.size });
  const queue = new QueueView(options.sms, options.storage);
  const inbound = new InboundView(options.sms, options.storage, options.principalId);
  const carrier = new CarrierView(options.sms, options.carrier);
  const credit = options.sms.credit;
  const showCredit = (): void =>
    void credit?.balance(options.principalId).then((balance) => streams.broadcast('credit', { balance }), () => undefined);
  /** What feeds the streams, while any is open: each event serialized once for all of them. */
  let unsubscribe: (() => void)[] = [];
  const streams = new EventStreams({
    maxStreams: options.maxStreams ?? MAX_STREAMS,
    maxBufferedBytes: options.maxBufferedBytes ?? MAX_BUFFERED_BYTES,
    onFirst: () => {
      // `added`: a message new to the list, which the first page shows at its top; `row`: a
      // change to one, shown wherever the page has it.
      unsubscribe = [
        log.subscribe((row, added) => streams.broadcast(added ? 'added' : 'row', row)),
        stats.subscribe((counts) => streams.broadcast('stats', statsEvent(counts))),
        // Each `queue.depth` sample (every 5 s).
        queue.subscribe((sample) => streams.broadcast('queue', sample)),
        // The inbound messages and the opt-out list after each change.
        inbound.subscribe((snapshot) => streams.broadcast('inbound', snapshot)),
        carrier.subscribe((snapshot) => streams.broadcast('carrier', snapshot)),
      ];
      // The demo key's credit (SMS_CREDIT) after each charge or refund.
      if (credit !== null) {
        options.sms.on('credit.charged', showCredit).on('credit.refunded', showCredit);
        unsubscribe.push(() => options.sms.off('credit.charged', showCredit).off('credit.refunded', showCredit));
      }
    },
    onLast: () => {
      for (const off of unsubscribe.splice(0)) off();
    },
  });
  const page = PAGE.replace('__SMS_API_KEY__', attribute(options.apiKey)).replace('__SMS_BASE_PATH__', attribute(options.basePath));
  const router = express.Router();

  router.get('/', (_req, res) => {
    res.type('html').set('Cache-Control', 'no-store').send(page);
  });

  // Browsers ask for it on every page; nothing to show, and no 404 in the console.
  router.get('/favicon.ico', (_req, res) => {
    res.set('Cache-Control', 'max-age=86400').sendStatus(204);
  });

  // SSE rather than polling: the router's events already say when a row changes.
  router.get('/demo/events', async (req, res, next) => {
    let first: MessagePage;
    let now: QueueSample | null;
    try {
      [first, now] = await Promise.all([log.page(1), queue.current()]);
    } catch (error) {
      next(error);
      return;
    }
    if (!streams.open(req, res)) return;
    // This page's start: the first page, the counts, the queue and the carrier now; the
    // changes follow as they come.
    streams.send(res, 'snapshot', first.rows);
    streams.send(res, 'stats', statsEvent(stats.counts()));
    if (now !== null) streams.send(res, 'queue', now);
    streams.send(res, 'carrier', carrier.current());
    void inbound.current().then((snapshot) => snapshot !== null && streams.send(res, 'inbound', snapshot), () => undefined);
    void credit?.balance(options.principalId).then((balance) => streams.send(res, 'credit', { balance }), () => undefined);
  });

  // The pages after the first, which the stream does not send; their rows still change
  // live through it.
  router.get('/demo/messages', async (req, res, next) => {
    const wanted = pageParam(req.query.page);
    if (wanted === null) {
      refuse(res, 'VALIDATION_FAILED', 'page: must be a whole number from 1');
      return;
    }
    try {
      res.set('Cache-Control', 'no-store').json(await log.page(wanted));
    } catch (error) {
      next(error);
    }
  });

  router.get('/demo/search', async (req, res, next) => {
    const query = typeof req.query.q === 'string' ? req.query.q.trim() : '';
    if (query === '' || query.length > MAX_QUERY || typeof req.query.q !== 'string') {
      refuse(res, 'VALIDATION_FAILED', `q: give one message_ref or external_id, 1 to ${MAX_QUERY} characters`);
      return;
    }
    try {
      const rows = await log.search(options.principalId, query, SEARCH_LIMIT + 1);
      // One more than shown is asked for, to say whether there are more.
      res.set('Cache-Control', 'no-store').json({ query, rows: rows.slice(0, SEARCH_LIMIT), more: rows.length > SEARCH_LIMIT });
    } catch (error) {
      next(error);
    }
  });

  // A subscriber's reply, as the simulated carrier would deliver it: the form of the page's
  // inbound section. It can opt a number out, so it takes the key.
  router.post('/demo/mo', requireKey(options.apiKey), express.json({ limit: '8kb' }), async (req, res, next) => {
    const { from, to, text } = (req.body ?? {}) as Record<string, unknown>;
    if (options.simulateInbound === undefined) {
      refuse(res, 'NO_SIMULATED_CARRIER', 'The demo runs on a real SMSC: MO messages come from it');
      return;
    }
    if (typeof from !== 'string' || !/^[0-9]{8,15}$/.test(from) || typeof to !== 'string' || to === '' || typeof text !== 'string' || text === '') {
      refuse(res, 'VALIDATION_FAILED', `give a JSON body ${MO_BODY}`);
      return;
    }
    try {
      await options.simulateInbound({ from, to, text });
      res.sendStatus(204);
    } catch (error) {
      next(error);
    }
  });

  router.use('/demo/mo', bodyErrors);

  router.get('/metrics', async (_req, res, next) => {
    try {
      const { contentType, text } = await options.metrics();
      res.type(contentType).send(text);
    } catch (error) {
      next(error);
    }
  });

  return router;
}
