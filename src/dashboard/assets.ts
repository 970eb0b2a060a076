/**
 * The console's static files, all served by its own router (no CDN): uPlot (MIT, from the
 * `uplot` dependency) and the console's stylesheet and chart script. Each is read once, on
 * first use, and served with a content hash in its URL, so a browser caches it for a year.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { RequestHandler } from 'express';
import { CHART_SCRIPT } from './chart-script.js';
import { STYLES } from './styles.js';

/** One file as served. */
interface Asset {
  type: string;
  body: Buffer;
  /** A short content hash, put into the URL. */
  hash: string;
}

const require = createRequire(import.meta.url);

function asset(type: string, text: string | Buffer): Asset {
  const body = typeof text === 'string' ? Buffer.from(text) : text;
  return { type, body, hash: createHash('sha256').update(body).digest('hex').slice(0, 10) };
}

let loaded: Record<string, Asset> | null = null;

/** The files by name; uPlot's are read from the installed package. */
export function assets(): Record<string, Asset> {
  loaded ??= {
    'uplot.js': asset('text/javascript', readFileSync(require.resolve('uplot/dist/uPlot.iife.min.js'))),
    'uplot.css': asset('text/css', readFileSync(require.resolve('uplot/dist/uPlot.min.css'))),
    'console.css': asset('text/css', STYLES),
    'charts.js': asset('text/javascript', CHART_SCRIPT),
  };
  return loaded;
}

/** The URL of `name` under the console's base, with its hash. */
export function assetUrl(base: string, name: string): string {
  return `${base}/assets/${assets()[name]!.hash}/${name}`;
}

/** `GET /assets/:hash/:name`. */
export const serveAsset: RequestHandler = (req, res) => {
  const found = assets()[String(req.params.name)];
  if (found === undefined) {
    res.status(404).json({ details: 'No such file', code: 'NOT_FOUND' });
    return;
  }
  res
    .type(found.type)
    .set('Cache-Control', req.params.hash === found.hash ? 'public, max-age=31536000, immutable' : 'no-cache')
    .set('X-Content-Type-Options', 'nosniff')
    .send(found.body);
};
