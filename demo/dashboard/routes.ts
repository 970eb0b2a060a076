/**
 * The demo host's dashboard routes: the page at `/`; a Server-Sent Events stream at
 * `/demo/events` of the newest messages, the last hour's counts and the queue; the older
 * pages at `/demo/messages?page=2`; the search at `/demo/search?q=`; a simulated subscriber's
 * reply at `POST /demo/mo` (the stream then sends the inbound messages and opt-outs); Prometheus metrics at
 * `/metrics`; and an empty `/favicon.ico`, so a browser's request for it is no 404.
 */
import { readFileSync } from 'node:fs';
import express, { type Router } from 'express';
import type { SmsRouter, Storage } from '../../src/index.js';
import { QueueView, type QueueSample } from './queue.js';
import { InboundView } from './inbound.js';
import { MessageLog, type MessagePage } from './recent.js';
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
}

const PAGE = readFileSync(new URL('./page.html', import.meta.url), 'utf8');

/** Escapes text for an HTML attribute value. */
function attribute(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function sse(res: express.Response, event: string, data: unknown): void {
  res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

/** What the page's counts line gets: the last hour, and how many messages the list holds. */
export interface StatsEvent extends HourCounts {
  /** How many messages the list holds, for the page count. */
  listed: number;
}

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
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store', Connection: 'keep-alive' });
    sse(res, 'snapshot', first.rows);
    sse(res, 'stats', statsEvent(stats.counts()));
    // The queue now, then each `queue.depth` sample (every 5 s).
    if (now !== null) sse(res, 'queue', now);
    // `added`: a message new to the list, which the first page shows at its top; `row`: a
    // change to one, shown wherever the page has it.
    const unsubscribeRows = log.subscribe((row, added) => sse(res, added ? 'added' : 'row', row));
    const unsubscribeStats = stats.subscribe((counts) => sse(res, 'stats', statsEvent(counts)));
    const unsubscribeQueue = queue.subscribe((sample) => sse(res, 'queue', sample));
    // The inbound messages and the opt-out list, now and after each change.
    void inbound.current().then((snapshot) => snapshot !== null && sse(res, 'inbound', snapshot), () => undefined);
    const unsubscribeInbound = inbound.subscribe((snapshot) => sse(res, 'inbound', snapshot));
    // The demo key's credit (SMS_CREDIT), now and after each charge or refund.
    const credit = options.sms.credit;
    const showCredit = (): void =>
      void credit?.balance(options.principalId).then((balance) => sse(res, 'credit', { balance }), () => undefined);
    if (credit !== null) {
      showCredit();
      options.sms.on('credit.charged', showCredit).on('credit.refunded', showCredit);
    }
    req.on('close', () => {
      options.sms.off('credit.charged', showCredit).off('credit.refunded', showCredit);
      unsubscribeRows();
      unsubscribeStats();
      unsubscribeQueue();
      unsubscribeInbound();
    });
  });

  // The pages after the first, which the stream does not send; their rows still change
  // live through it.
  router.get('/demo/messages', async (req, res, next) => {
    const wanted = pageParam(req.query.page);
    if (wanted === null) {
      res.status(400).json({ details: 'page: must be a whole number from 1' });
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
    if (query === '' || query.length > MAX_QUERY) {
      res.status(400).json({ details: `q: give one message_ref or external_id, 1 to ${MAX_QUERY} characters` });
      return;
    }
    try {
      res.set('Cache-Control', 'no-store').json({ query, rows: await log.search(options.principalId, query) });
    } catch (error) {
      next(error);
    }
  });

  // A subscriber's reply, as the simulated carrier would deliver it: the form of the page's
  // inbound section.
  router.post('/demo/mo', express.json({ limit: '8kb' }), async (req, res, next) => {
    const { from, to, text } = (req.body ?? {}) as Record<string, unknown>;
    if (options.simulateInbound === undefined) {
      res.status(409).json({ details: 'the demo runs on a real SMSC: MO messages come from it' });
      return;
    }
    if (typeof from !== 'string' || !/^[0-9]{8,15}$/.test(from) || typeof to !== 'string' || to === '' || typeof text !== 'string' || text === '') {
      res.status(400).json({ details: 'give from (8 to 15 digits), to (a short code) and text' });
      return;
    }
    try {
      await options.simulateInbound({ from, to, text });
      res.sendStatus(204);
    } catch (error) {
      next(error);
    }
  });

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
