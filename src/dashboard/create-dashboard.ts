/**
 * `createSmsDashboard(sms, options)`: the operator console as an Express router the host
 * mounts where it likes, behind its own staff check:
 *
 * ```ts
 * app.use('/admin/sms', requireStaff, createSmsDashboard(sms, { auth: (req) => req.user?.isStaff === true }));
 * ```
 *
 * Pages are rendered on the server; the only script draws the overview's charts (uPlot,
 * served by the router itself). Every action is a POST form with a CSRF token, taken only
 * from a same-origin page, and answers with a redirect back to its view.
 */
import express, { type NextFunction, type Request, type RequestHandler, type Response, type Router } from 'express';
import type { SmsRouter } from '../router/create-router.js';
import { serveAsset } from './assets.js';
import { CarrierWatch } from './carrier.js';
import { CsrfTokens, refuse, requireAuth, requireCsrf } from './guard.js';
import { MinuteHistory } from './history.js';
import { page, VIEWS } from './html.js';
import { resolveDashboardOptions, type SmsDashboardOptions } from './options.js';
import * as views from './views.js';
import { carrier } from './carrier-view.js';
import { principals, PrincipalsSeen } from './principals-view.js';
import { callbacks, replayAction, replayInboundAction } from './callbacks-view.js';

/** What an action's redirect says on the page it lands on. */
const NOTICES: Record<string, string> = {
  cancelled: 'Message cancelled.',
  'not-cancelled': 'Not cancelled: the message had already gone to the carrier or ended.',
  'opted-in': 'Removed from the opt-out list.',
  'topped-up': 'Credit topped up.',
  replayed: 'Delivery reports queued to be sent again.',
};

/** A query or body field as trimmed text ('' when absent or not one string). */
function field(source: unknown, name: string): string {
  const value = (source as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value.trim().slice(0, 200) : '';
}

/** Runs an async handler, passing a failure to Express. */
function handle(fn: (req: Request, res: Response) => Promise<void> | void): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    Promise.resolve()
      .then(() => fn(req, res))
      .catch(next);
  };
}

/**
 * Creates the console for `sms` (what `createSmsRouter` returns).
 *
 * @throws OptionError `DASHBOARD_UNGUARDED` without `auth` or `allowUnauthenticated: true`.
 */
export function createSmsDashboard(sms: SmsRouter, options: SmsDashboardOptions): Router {
  const config = resolveDashboardOptions(options);
  if (sms === null || typeof sms !== 'function' || typeof sms.on !== 'function' || sms.storage === undefined) {
    throw new TypeError('createSmsDashboard: sms must be what createSmsRouter returns');
  }
  const history = new MinuteHistory(sms);
  const carrierWatch = new CarrierWatch(sms);
  const principalsSeen = new PrincipalsSeen(sms);
  const tokens = new CsrfTokens();
  const router = express.Router();
  router.use(requireAuth(config.auth));
  router.get('/assets/:hash/:name', serveAsset);

  const render = (view: string, heading: string, body: (context: views.ViewContext, req: Request) => Promise<string> | string, charts = false): RequestHandler =>
    handle(async (req, res) => {
      const context: views.ViewContext = { sms, base: req.baseUrl, csrf: tokens.tokenFor(req, res), now: Date.now() };
      const done = field(req.query, 'done');
      const notice = NOTICES[done] === undefined ? null : { text: NOTICES[done]!, error: done === 'not-cancelled' };
      const html = page({ base: req.baseUrl, title: config.title, view, heading, notice, charts }, await body(context, req));
      // Framed by no one (clickjacking of the action buttons), cached by no one.
      res.type('html').set({ 'Cache-Control': 'no-store', 'X-Frame-Options': 'DENY', 'Content-Security-Policy': "frame-ancestors 'none'" }).send(html);
    });
  const heading = (path: string): string => VIEWS.find(([p]) => p === path)![1];

  router.get('/', render('', heading(''), (context) => views.overview(context, history), true));
  router.get('/history.json', (_req, res) => {
    res.set('Cache-Control', 'no-store').json(history.snapshot());
  });
  router.get('/carrier', render('/carrier', heading('/carrier'), (context) => carrier(context, carrierWatch)));
  router.get('/inbound', render('/inbound', heading('/inbound'), (context) => views.inbound(context)));
  router.get('/message', render('/message', heading('/message'), (context, req) => views.message(context, field(req.query, 'principal'), field(req.query, 'ref'))));
  router.get('/messages', render('/messages', heading('/messages'), (context, req) => views.messages(context, field(req.query, 'principal'), field(req.query, 'external_id'), field(req.query, 'cursor'))));
  router.get('/callbacks', render('/callbacks', heading('/callbacks'), (context, req) => callbacks(context, field(req.query, 'principal'), field(req.query, 'cursor'), field(req.query, 'inbound_cursor'))));
  router.get('/credit', render('/credit', heading('/credit'), (context, req) => views.credit(context, field(req.query, 'principal'))));
  router.get('/principals', render('/principals', heading('/principals'), (context) => principals(context, principalsSeen)));

  // Each action on the console's own router, so `req.baseUrl` is the mount point its redirect goes back under.
  const form = [express.urlencoded({ extended: false, limit: '4kb' }), requireCsrf(tokens)];
  router.post('/actions/cancel', ...form, handle(async (req, res) => {
    const principal = field(req.body, 'principal');
    const ref = field(req.body, 'ref');
    if (sms.cancel === null) return refuse(res, 'NOT_SUPPORTED', 'This storage cannot cancel messages (no cancelMessages)');
    if (principal === '' || ref === '') return refuse(res, 'VALIDATION_FAILED', 'principal and ref: both required');
    const result = await sms.cancel(principal, [ref]);
    if (result.cancelled.length === 0 && result.notCancelled.length === 0) return refuse(res, 'NOT_FOUND', `No message ${ref} of ${principal}`);
    const back = `${req.baseUrl}/message?principal=${encodeURIComponent(principal)}&ref=${encodeURIComponent(ref)}`;
    res.redirect(303, `${back}&done=${result.cancelled.length > 0 ? 'cancelled' : 'not-cancelled'}`);
  }));
  router.post('/actions/opt-in', ...form, handle(async (req, res) => {
    const shortCode = field(req.body, 'shortCode');
    const number = field(req.body, 'number');
    if (sms.storage.listInbound === undefined) return refuse(res, 'NOT_SUPPORTED', 'This storage keeps no opt-out list');
    if (shortCode === '' || number === '') return refuse(res, 'VALIDATION_FAILED', 'shortCode and number: both required');
    await sms.optOuts.remove(shortCode, number);
    res.redirect(303, `${req.baseUrl}/inbound?done=opted-in`);
  }));
  router.post('/actions/replay', ...form, handle((req, res) => replayAction(sms, res, req.baseUrl, field(req.body, 'principal'), field(req.body, 'ref'))));
  router.post('/actions/replay-inbound', ...form, handle((req, res) => replayInboundAction(sms, res, req.baseUrl, field(req.body, 'principal'), field(req.body, 'ref'))));
  router.post('/actions/top-up', ...form, handle(async (req, res) => {
    const principal = field(req.body, 'principal');
    const units = field(req.body, 'units');
    if (sms.credit === null) return refuse(res, 'NOT_SUPPORTED', 'The router keeps no credit ledger');
    if (principal === '' || !/^[1-9][0-9]{0,8}$/.test(units)) return refuse(res, 'VALIDATION_FAILED', 'principal: required; units: a whole number from 1 to 999999999');
    await sms.credit.topUp(principal, Number(units));
    res.redirect(303, `${req.baseUrl}/credit?principal=${encodeURIComponent(principal)}&done=topped-up`);
  }));
  // A body the form parser refuses: 400/413 JSON, as everywhere else; anything else is the host's.
  router.use((error: { type?: string; status?: number }, _req: Request, res: Response, next: NextFunction) => {
    if (error.type === 'entity.too.large') refuse(res, 'VALIDATION_FAILED', 'Form body is larger than 4 KB');
    else if (typeof error.type === 'string' && error.status !== undefined && error.status < 500) refuse(res, 'VALIDATION_FAILED', 'Form body could not be read');
    else next(error);
  });
  return router;
}
