/**
 * The demo host's own routes besides the API and the operator console: `/`, which hands the
 * browser the demo's key in the console's cookie and sends it on to the console at
 * `/console/`; a simulated subscriber's reply at `POST /demo/mo`; Prometheus metrics at
 * `/metrics`; and an empty `/favicon.ico`, so a browser's request for it is no 404.
 */
import { timingSafeEqual } from 'node:crypto';
import express, { type ErrorRequestHandler, type RequestHandler, type Router } from 'express';
import { DEMO_KEY_COOKIE, digest } from './console-auth.js';
import { refuse } from './errors.js';

/** What the routes need from the demo host. */
export interface DemoRoutesOptions {
  /** The demo key: the console's cookie, and what `POST /demo/mo` takes. */
  apiKey: string;
  /** Where the console is mounted (`/console`). */
  consolePath: string;
  /** The Prometheus text of `/metrics`, with its content type. */
  metrics: () => Promise<{ contentType: string; text: string }>;
  /** Has the simulated carrier deliver an MO message (`POST /demo/mo`); absent with a real SMSC. */
  simulateInbound?: (message: { from: string; to: string; text: string }) => Promise<void>;
}

/** What `POST /demo/mo` takes, in its refusals' words. */
export const MO_BODY = '{ "from": 8 to 15 digits, "to": a short code, "text": not empty }';

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

/**
 * Returns the demo's own routes.
 *
 * `/` gives the key to whoever loads it: acceptable only because this is a local demo
 * whose key the terminal prints anyway, reached on loopback and by its own names only. A
 * real host puts its own staff login in front of the console.
 */
export function demoRoutes(options: DemoRoutesOptions): Router {
  const router = express.Router();

  router.get('/', (_req, res) => {
    // HttpOnly and scoped to the console: no script reads it, no other path is sent it.
    res
      .cookie(DEMO_KEY_COOKIE, options.apiKey, { path: options.consolePath, httpOnly: true, sameSite: 'strict' })
      .set('Cache-Control', 'no-store')
      .redirect(303, `${options.consolePath}/`);
  });

  // Browsers ask for it on every page; nothing to show, and no 404 in the console.
  router.get('/favicon.ico', (_req, res) => {
    res.set('Cache-Control', 'max-age=86400').sendStatus(204);
  });

  // A subscriber's reply, as the simulated carrier would deliver it. It can opt a number
  // out, so it takes the key.
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
