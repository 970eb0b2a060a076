/**
 * The console's views, each read fresh on every request from what `sms` exposes: storage
 * (the queue count, a message with its parts and report, inbound messages, the opt-out
 * list, credit balances) and what this process counted from the router's events (the
 * hour's per-minute history, the carrier's binds).
 */
import type { SmsRouter } from '../router/create-router.js';
import type { MinuteHistory, RateRow } from './history.js';
import type { Percentiles, WindowSnapshot } from './traffic-window.js';
import { actionForm, age, esc, table, td, time } from './html.js';
import { listMessagesForConsole } from './message-list.js';

/** What every view gets. */
export interface ViewContext {
  sms: SmsRouter;
  base: string;
  csrf: string;
  now: number;
}

function rates(rows: RateRow[], what: string, id: string): string {
  return table(
    [what, 'delivered', 'ended', 'rate'],
    rows.map((row) => [td(row.key), td(row.delivered), td(row.ended), td(`${Math.round(row.rate * 1000) / 10}%`)]),
    'No message ended this hour',
    id,
  );
}

/** A latency in seconds as read: `120 ms`, `4.2 s`, `3 min`; `-` without one (the chart script writes it alike). */
function latencyText(seconds: number | null): string {
  if (seconds === null) return '-';
  if (seconds < 1) return `${Math.round(seconds * 1000)} ms`;
  return seconds < 120 ? `${Math.round(seconds * 10) / 10} s` : `${Math.round(seconds / 60)} min`;
}

/** The window's latencies as text: p50 and p95 of each leg, under ids `${prefix}latency-<leg>`. */
function latencies(window: { acceptToSubmit: Percentiles; submitToFinal: Percentiles }, prefix: string): string {
  const leg = (name: 'acceptToSubmit' | 'submitToFinal', label: string): string =>
    `<li><b id="${prefix}latency-${name}">${esc(`${latencyText(window[name].all.p50)} / ${latencyText(window[name].all.p95)}`)}</b>${label} p50 / p95</li>`;
  return `<ul class="counts">${leg('acceptToSubmit', 'accept to submit')}${leg('submitToFinal', 'submit to final')}</ul>`;
}

/** The day's section: its counts, its traffic chart and its latency chart. */
function daySection(day: WindowSnapshot): string {
  const sum = (values: number[]): number => values.reduce((a, b) => a + b, 0);
  const counts = (['accepted', 'submitted', 'delivered', 'failed'] as const)
    .map((name) => `<li><b id="day-total-${name}">${sum(day[name])}</b>${name}</li>`)
    .join('');
  return `<section id="day"><h2>Last 24 hours, per ${day.stepS / 60} minutes</h2><ul class="counts">${counts}</ul>
<div class="chart" id="chart-day-traffic" role="img" aria-label="Messages per quarter hour over the day: accepted, submitted, delivered, failed"></div>
${latencies(day, 'day-')}
<div class="chart" id="chart-day-latency" role="img" aria-label="Latency per quarter hour over the day: accept to submit and submit to final, p50 and p95"></div></section>`;
}

/** `/`: the hour's and the day's counts, latencies and charts, the queue, the delivery rates, the credit spent. */
export async function overview(context: ViewContext, history: MinuteHistory): Promise<string> {
  const h = history.snapshot();
  const storage = context.sms.storage;
  const queue = storage.countQueued === undefined ? null : await storage.countQueued();
  const sum = (values: number[]): number => values.reduce((a, b) => a + b, 0);
  const counts = (['accepted', 'submitted', 'delivered', 'failed'] as const)
    .map((name) => `<li><b id="total-${name}">${sum(h[name])}</b>${name}</li>`)
    .join('');
  const queueText =
    queue === null
      ? '<p class="hint">This storage does not count its queue (no <code>countQueued</code>).</p>'
      : `<ul class="counts" id="queue"><li><b id="queue-transactional">${queue.transactional}</b>transactional</li><li><b id="queue-bulk">${queue.bulk}</b>bulk</li><li><b id="queue-oldest">${
          queue.oldestAcceptedAt === null ? 'none' : esc(age(context.now - queue.oldestAcceptedAt))
        }</b>oldest waiting</li></ul>`;
  const credit =
    context.sms.credit === null
      ? ''
      : `<section id="credit-spent"><h2>Credit spent, last hour</h2><ul class="counts"><li><b id="total-creditSpent">${sum(h.creditSpent)}</b>SMS units (charged less refunded)</li></ul><div class="chart" id="chart-credit"></div></section>`;
  // `<` escaped so the JSON cannot close its script element.
  const data = JSON.stringify(h).replace(/</g, '\\u003c');
  return `<div class="wide pair"><section id="hour"><h2>Last hour, per minute</h2><ul class="counts">${counts}</ul>
<div class="chart" id="chart-traffic" role="img" aria-label="Messages per minute: accepted, submitted, delivered, failed"></div>
${latencies(h, '')}
<div class="chart" id="chart-latency" role="img" aria-label="Latency per minute: accept to submit and submit to final, p50 and p95"></div>
<p class="hint">Counted from the router's events by this process since it started (a restart starts at zero). Latency in seconds: accept to submit on the left axis, submit to final on the right.</p>
<script type="application/json" id="history">${data}</script></section>
${daySection(h.day)}</div>
<section id="queue-panel"><h2>Queue now</h2>${queueText}<p class="hint">Read from storage at ${esc(time(context.now))}.</p>${
    queue === null ? '' : '<div class="chart" id="chart-queue" role="img" aria-label="Queue depth by class and oldest wait, per minute"></div>'
  }</section>
<section id="rates-country"><h2>Delivery rate by country</h2>${rates(h.byCountry, 'country', 'rate-country')}</section>
<section id="rates-route"><h2>Delivery rate by route</h2>${rates(h.byRoute, 'route / bind', 'rate-route')}
<p class="hint">Messages this process submitted, by the route and bind that took their last part.</p></section>
<section id="rates-endpoint"><h2>Delivery rate by endpoint</h2>${rates(h.byEndpoint, 'endpoint', 'rate-endpoint')}</section>
${credit}`;
}

/** `/inbound`: the newest inbound messages and the opt-out list, each entry removable. */
export async function inbound(context: ViewContext): Promise<string> {
  const storage = context.sms.storage;
  if (storage.listInbound === undefined) {
    return '<section class="wide"><h2>Inbound</h2><p class="hint">This storage keeps no inbound messages or opt-out list.</p></section>';
  }
  const [messages, optOuts] = await Promise.all([storage.listInbound({ limit: 50 }), context.sms.optOuts.list({ limit: 200 })]);
  const rows = messages.map((m) => [
    td(time(m.receivedAt)),
    td(m.from, 'mono'),
    td(m.to, 'mono'),
    td(m.text),
    td(m.callback === null ? 'not forwarded' : `${m.callback.state} (${m.callback.attempts} attempt${m.callback.attempts === 1 ? '' : 's'})`),
  ]);
  const outs = optOuts.map((o) => [
    td(o.shortCode, 'mono'),
    td(o.number, 'mono'),
    td(time(o.createdAt)),
    `<td>${actionForm(context.base, '/actions/opt-in', context.csrf, { shortCode: o.shortCode, number: o.number }, 'Remove')}</td>`,
  ]);
  return `<section class="wide" id="inbound"><h2>Inbound messages (newest 50)</h2>${table(['received', 'from', 'to', 'text', 'forwarded'], rows, 'No inbound message', 'inbound-table')}</section>
<section class="wide" id="opt-outs"><h2>Opt-out list</h2>${table(['short code', 'number', 'since', ''], outs, 'Nobody opted out', 'opt-out-table')}</section>`;
}

/** `/message?principal=&ref=`: one message with its parts and its delivery report. */
export async function message(context: ViewContext, principal: string, ref: string): Promise<string> {
  const form = `<section class="wide"><h2>Look up a message</h2><form class="inline" method="get" action="${esc(context.base)}/message" role="search">
<label for="principal">principal</label><input id="principal" name="principal" value="${esc(principal)}" required maxlength="200">
<label for="ref">message_ref</label><input id="ref" name="ref" value="${esc(ref)}" required maxlength="200"><button type="submit">Look up</button></form></section>`;
  if (principal === '' || ref === '') return form;
  const found = await context.sms.storage.getMessage(principal, ref);
  if (found === null) return `${form}<section class="wide" id="message"><p id="not-found">No message ${esc(ref)} of ${esc(principal)}.</p></section>`;
  const fields: [string, unknown][] = [
    ['ref', found.ref], ['state', found.state], ['reason', found.statusDescription ?? found.statusReason ?? '-'], ['endpoint', found.endpoint],
    ['external id', found.externalId], ['recipient', found.recipient], ['country', found.country ?? '-'], ['profile', found.profileCode], ['text', found.text],
    ['sms', found.smsCount], ['accepted', time(found.createdAt)], ['updated', time(found.updatedAt)], ['carrier retries', found.attempts],
  ];
  const parts = table(
    ['part', 'carrier id', 'submitted', 'outcome', 'receipt at'],
    found.parts.map((p) => [td(p.index + 1), td(p.carrierId ?? '-', 'mono'), td(time(p.submittedAt)), td(p.outcome ?? '-'), td(time(p.endedAt))]),
    'No part recorded yet',
    'parts',
  );
  const report = found.callback;
  const reportText =
    found.callbackUrl === null
      ? 'none requested'
      : report === null
        ? 'waiting for the message to end'
        : `${report.state} after ${report.attempts} attempt${report.attempts === 1 ? '' : 's'}${report.lastStatusCode === null ? '' : `, last HTTP ${report.lastStatusCode}`}${
            report.lastError === null ? '' : `, last error ${report.lastError}`
          }${report.nextAttemptAt === null ? '' : `, next at ${time(report.nextAttemptAt)}`}`;
  const cancellable = context.sms.cancel !== null && (found.state === 'queued' || found.state === 'scheduled');
  const actions = [
    cancellable ? actionForm(context.base, '/actions/cancel', context.csrf, { principal, ref: found.ref }, 'Cancel this message') : '',
    report?.state === 'failed' && context.sms.storage.replayCallbacks !== undefined ? actionForm(context.base, '/actions/replay', context.csrf, { principal, ref: found.ref }, 'Replay the delivery report') : '',
  ].join('');
  return `${form}<section class="wide" id="message" data-state="${esc(found.state)}"><h2>Message</h2><div class="table-wrap"><table><tbody>${fields
    .map(([name, value]) => `<tr><th scope="row">${esc(name)}</th>${td(value, name === 'ref' ? 'mono' : undefined)}</tr>`)
    .join('')}</tbody></table></div>${actions}</section>
<section id="message-parts"><h2>Parts</h2>${parts}</section>
<section id="message-report"><h2>Delivery report</h2><p id="report">${esc(reportText)}</p><p class="hint mono">${esc(found.callbackUrl ?? '')}</p></section>`;
}

/** Messages with one external id shown at most (the newest), as the demo's search showed. */
const FOUND_MAX = 1_000;

/** `/messages?principal=&external_id=&cursor=`: a principal's messages, newest first, 50 a page; or every one with an external id (the newest 1,000). */
export async function messages(context: ViewContext, principal: string, externalId: string, cursor: string): Promise<string> {
  const storage = context.sms.storage;
  const byExternalId = principal !== '' && externalId !== '';
  const found = byExternalId ? await storage.findByExternalId(principal, externalId, FOUND_MAX + 1) : null;
  const listed = principal === '' || byExternalId ? null : await listMessagesForConsole(storage, { principalId: principal, limit: 50, cursor });
  const rows = (found?.slice(0, FOUND_MAX) ?? listed?.rows ?? []).map((m) => [
    `<td class="mono"><a href="${esc(`${context.base}/message?principal=${encodeURIComponent(principal)}&ref=${encodeURIComponent(m.ref)}`)}">${esc(m.ref)}</a></td>`,
    td(m.externalId ?? '-'), td(m.state), td(m.statusDescription ?? m.statusReason ?? '-'), td(m.recipient), td(time(m.createdAt)),
  ]);
  const headers = ['ref', 'external id', 'state', 'reason', 'recipient', 'accepted'];
  const result =
    principal === ''
      ? ''
      : byExternalId
        ? `${table(headers, rows, `No message with external id ${externalId}`, 'message-list')}${found!.length > FOUND_MAX ? `<p class="hint" id="more-found">The newest ${FOUND_MAX} are shown; there are more.</p>` : ''}`
        : listed === null
          ? '<p class="hint" id="no-list">This storage cannot list messages: look one up by ref, or by external id.</p>'
          : table(headers, rows, 'No message', 'message-list');
  return `<section class="wide" id="messages"><h2>Messages</h2><form class="inline" method="get" action="${esc(context.base)}/messages">
<label for="list-principal">principal</label><input id="list-principal" name="principal" value="${esc(principal)}" required maxlength="200">
<label for="external-id">external id (optional)</label><input id="external-id" name="external_id" value="${esc(externalId)}" maxlength="200"><button type="submit">List</button></form>
${result}
${listed?.nextCursor == null ? '' : `<p><a id="next-page" href="${esc(`${context.base}/messages?principal=${encodeURIComponent(principal)}&cursor=${encodeURIComponent(listed.nextCursor)}`)}">Older messages</a></p>`}</section>`;
}

/** `/credit?principal=`: a balance, and the top-up form. */
export async function credit(context: ViewContext, principal: string): Promise<string> {
  const accounts = context.sms.credit;
  if (accounts === null) return '<section class="wide"><h2>Credit</h2><p class="hint">The router keeps no credit ledger (no <code>credit: { ledger: \'storage\' }</code>).</p></section>';
  const balance = principal === '' ? null : await accounts.balance(principal);
  const topUp = actionForm(
    context.base, '/actions/top-up', context.csrf, {}, 'Top up',
    `<label for="top-principal">principal</label><input id="top-principal" name="principal" value="${esc(principal)}" required maxlength="200"><label for="units">units</label><input id="units" name="units" inputmode="numeric" pattern="[1-9][0-9]{0,8}" required>`,
  );
  return `<section class="wide" id="credit"><h2>Credit</h2><form class="inline" method="get" action="${esc(context.base)}/credit">
<label for="credit-principal">principal</label><input id="credit-principal" name="principal" value="${esc(principal)}" required maxlength="200"><button type="submit">Show balance</button></form>
${balance === null ? '' : `<p>Balance of <span class="mono">${esc(principal)}</span>: <b id="balance">${balance}</b> SMS units</p>`}
<h2>Top up</h2>${topUp}</section>`;
}
