/**
 * The demo host's dashboard routes: the page at `/`, a Server-Sent Events stream of the
 * recent messages and of the queue at `/demo/events`, and Prometheus metrics at `/metrics`.
 */
import { readFileSync } from 'node:fs';
import express, { type Router } from 'express';
import type { SmsRouter, Storage } from '../../src/index.js';
import { QueueView, type QueueSample } from './queue.js';
import { RecentMessages, type MessageRow } from './recent.js';

/** What the dashboard needs from the demo host. */
export interface DashboardOptions {
  /** The router whose events feed the page. */
  sms: SmsRouter;
  /** The router's storage, read for the snapshot a page gets when it connects. */
  storage: Storage;
  /** The demo key, put into the page so its form can send. */
  apiKey: string;
  /** Where the router's endpoints are, as the page's form posts them. */
  basePath: string;
  /** The Prometheus text of `/metrics`, with its content type. */
  metrics: () => Promise<{ contentType: string; text: string }>;
}

const PAGE = readFileSync(new URL('./page.html', import.meta.url), 'utf8');

/** Escapes text for an HTML attribute value. */
function attribute(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function sse(res: express.Response, event: string, data: unknown): void {
  res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

/**
 * Returns the dashboard's routes.
 *
 * The API key is written into the page: acceptable only because this is a local demo
 * whose key the console prints anyway. A real host must never hand a key to a browser;
 * its own back end would call the send API.
 */
export function dashboardRoutes(options: DashboardOptions): Router {
  const recent = new RecentMessages(options.sms, options.storage);
  const queue = new QueueView(options.sms, options.storage);
  const page = PAGE.replace('__SMS_API_KEY__', attribute(options.apiKey)).replace('__SMS_BASE_PATH__', attribute(options.basePath));
  const router = express.Router();

  router.get('/', (_req, res) => {
    res.type('html').set('Cache-Control', 'no-store').send(page);
  });

  // SSE rather than polling: the router's events already say when a row changes.
  router.get('/demo/events', async (req, res, next) => {
    let rows: MessageRow[];
    let now: QueueSample | null;
    try {
      [rows, now] = await Promise.all([recent.snapshot(), queue.current()]);
    } catch (error) {
      next(error);
      return;
    }
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store', Connection: 'keep-alive' });
    sse(res, 'snapshot', rows);
    // The queue now, then each `queue.depth` sample (every 5 s).
    if (now !== null) sse(res, 'queue', now);
    const unsubscribeRows = recent.subscribe((row) => sse(res, 'row', row));
    const unsubscribeQueue = queue.subscribe((sample) => sse(res, 'queue', sample));
    req.on('close', () => {
      unsubscribeRows();
      unsubscribeQueue();
    });
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
