/**
 * The console's page frame and HTML helpers: every page is rendered on the server, text
 * escaped where it is written, with the header's navigation and the two static files.
 */
import { assetUrl } from './assets.js';

/** The console's views, in the navigation's order: path under the mount point, label. */
export const VIEWS = [
  ['', 'Overview'],
  ['/carrier', 'Carrier'],
  ['/inbound', 'Inbound & opt-outs'],
  ['/message', 'Message lookup'],
  ['/messages', 'Messages'],
  ['/credit', 'Credit'],
  ['/principals', 'Principals'],
  ['/callbacks', 'Callbacks'],
] as const;

/** Escapes text for HTML content and attribute values. */
export function esc(value: unknown): string {
  return String(value).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

/** A time as ISO text (UTC), or `-`. */
export function time(ms: number | null | undefined): string {
  return ms === null || ms === undefined ? '-' : new Date(ms).toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}

/** A wait in words: `4 s`, `2 min 5 s`, `3 h 20 min`. */
export function age(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

/** A table, or a line saying it is empty. */
export function table(headers: string[], rows: string[][], empty: string, id?: string): string {
  if (rows.length === 0) return `<p class="hint"${id === undefined ? '' : ` id="${id}-empty"`}>${esc(empty)}</p>`;
  return `<div class="table-wrap"><table${id === undefined ? '' : ` id="${id}"`}><thead><tr>${headers.map((h) => `<th scope="col">${esc(h)}</th>`).join('')}</tr></thead><tbody>${rows
    .map((cells) => `<tr>${cells.join('')}</tr>`)
    .join('')}</tbody></table></div>`;
}

/** A cell of escaped text. */
export function td(text: unknown, className?: string): string {
  return `<td${className === undefined ? '' : ` class="${className}"`}>${esc(text)}</td>`;
}

/** A POST form for one action, carrying the CSRF token. */
export function actionForm(base: string, action: string, csrf: string, fields: Record<string, string>, label: string, extra = ''): string {
  const hidden = Object.entries(fields).map(([name, value]) => `<input type="hidden" name="${esc(name)}" value="${esc(value)}">`).join('');
  return `<form class="inline" method="post" action="${esc(base + action)}"><input type="hidden" name="_csrf" value="${esc(csrf)}">${hidden}${extra}<button type="submit">${esc(label)}</button></form>`;
}

/** What a page needs to be framed. */
export interface Frame {
  /** The console's mount point (`req.baseUrl`). */
  base: string;
  /** The console's title. */
  title: string;
  /** The view's path (one of {@link VIEWS}). */
  view: string;
  /** The view's heading. */
  heading: string;
  /** A line above the content: what the last action did, or why it failed. */
  notice?: { text: string; error: boolean } | null;
  /** Whether the page draws charts (then uPlot is loaded). */
  charts?: boolean;
}

/** The whole page around `body`. */
export function page(frame: Frame, body: string): string {
  const nav = VIEWS.map(([path, label]) => `<li><a href="${esc(frame.base + path + (path === '' ? '/' : ''))}"${path === frame.view ? ' aria-current="page"' : ''}>${esc(label)}</a></li>`).join('');
  const notice =
    frame.notice == null ? '' : `<p class="notice${frame.notice.error ? ' error' : ''}" role="status" id="notice">${esc(frame.notice.text)}</p>`;
  const charts = frame.charts === true;
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${esc(frame.heading)} - ${esc(frame.title)}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${esc(assetUrl(frame.base, 'console.css'))}">${charts ? `<link rel="stylesheet" href="${esc(assetUrl(frame.base, 'uplot.css'))}">` : ''}
</head><body data-base="${esc(frame.base)}"><header><h1>${esc(frame.title)}</h1><nav aria-label="Console"><ul>${nav}</ul></nav></header>
<main id="main">${notice ? `<div class="wide" style="grid-column:1/-1">${notice}</div>` : ''}${body}</main>
${charts ? `<script src="${esc(assetUrl(frame.base, 'uplot.js'))}"></script><script src="${esc(assetUrl(frame.base, 'charts.js'))}"></script>` : ''}
</body></html>`;
}
