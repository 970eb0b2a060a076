/**
 * The console's "Callbacks" view: one principal's failed delivery reports, newest first, a
 * page at a time, read with the storage's `listCallbacks` (the index `GET {base}/callbacks`
 * reads), each with a Replay button, and one button that replays all of them; below them its
 * failed inbound (MO) webhooks alike (`listInboundWebhooks`, as `?kind=inbound` reads); and
 * the replay actions behind those buttons (`router.callbacks.replay` and `replayInbound`),
 * which also resume the principal's paused callback URLs.
 */
import type { Response } from 'express';
import type { SmsRouter } from '../router/create-router.js';
import { refuse } from './guard.js';
import { actionForm, esc, table, td, time } from './html.js';
import { positionOf } from './message-list.js';
import type { ViewContext } from './views.js';

/** Rows per page. */
const PAGE = 50;

/**
 * `/callbacks?principal=&cursor=&inbound_cursor=`: the principal's failed reports and failed
 * inbound webhooks, with the replay buttons.
 */
export async function callbacks(context: ViewContext, principal: string, cursor: string, inboundCursor: string): Promise<string> {
  const storage = context.sms.storage;
  const form = `<section class="wide" id="callbacks"><h2>Failed delivery reports</h2><form class="inline" method="get" action="${esc(context.base)}/callbacks">
<label for="callbacks-principal">principal</label><input id="callbacks-principal" name="principal" value="${esc(principal)}" required maxlength="200"><button type="submit">List</button></form>`;
  const paused = context.sms.callbacks.paused();
  const pausedText =
    paused.length === 0 ? '' : `<p class="hint" id="paused">Paused callback URLs (a replay resumes them): ${paused.map((p) => `<span class="mono">${esc(p.url)}</span> failing since ${esc(time(p.failingSince))}`).join('; ')}</p>`;
  if (storage.listCallbacks === undefined) return `${form}<p class="hint" id="no-callbacks">This storage cannot list delivery reports (no <code>listCallbacks</code>).</p></section>`;
  if (principal === '') return `${form}${pausedText}</section>`;
  const after = positionOf(cursor);
  const page = await storage.listCallbacks({ principalId: principal, states: ['failed'], limit: PAGE, ...(after === undefined ? {} : { after }) });
  const rows = page.messages.map((m) => [
    `<td class="mono"><a href="${esc(`${context.base}/message?principal=${encodeURIComponent(principal)}&ref=${encodeURIComponent(m.ref)}`)}">${esc(m.ref)}</a></td>`,
    td(m.callbackUrl ?? '-', 'mono'),
    td(m.callback?.attempts ?? 0),
    td(m.callback?.lastStatusCode ?? '-'),
    td(m.callback?.lastError ?? '-'),
    td(time(m.updatedAt)),
    `<td>${actionForm(context.base, '/actions/replay', context.csrf, { principal, ref: m.ref }, 'Replay')}</td>`,
  ]);
  const all = rows.length === 0 ? '' : actionForm(context.base, '/actions/replay', context.csrf, { principal }, `Replay every failed report of ${principal}`);
  const next = page.next === null ? '' : `<p><a id="callbacks-next" href="${esc(`${context.base}/callbacks?principal=${encodeURIComponent(principal)}&cursor=${page.next.createdAt}.${page.next.seq}`)}">Older reports</a></p>`;
  const reports = table(['message', 'url', 'attempts', 'last status', 'last error', 'ended', ''], rows, 'No failed delivery report', 'callback-list');
  return `${form}${pausedText}${reports}${all}${next}</section>${await failedInbound(context, principal, cursor, inboundCursor)}`;
}

/** The section of the principal's failed inbound webhooks, or '' when the storage cannot list them. */
async function failedInbound(context: ViewContext, principal: string, cursor: string, inboundCursor: string): Promise<string> {
  const storage = context.sms.storage;
  if (storage.listInboundWebhooks === undefined) return '';
  const after = positionOf(inboundCursor);
  const page = await storage.listInboundWebhooks({ principalId: principal, states: ['failed'], limit: PAGE, ...(after === undefined ? {} : { after }) });
  const rows = page.inbound.map((m) => [
    td(m.ref, 'mono'),
    td(m.from, 'mono'),
    td(m.to, 'mono'),
    td(m.callbackUrl ?? '-', 'mono'),
    td(m.callback?.attempts ?? 0),
    td(m.callback?.lastStatusCode ?? '-'),
    td(m.callback?.lastError ?? '-'),
    td(time(m.receivedAt)),
    `<td>${actionForm(context.base, '/actions/replay-inbound', context.csrf, { principal, ref: m.ref }, 'Replay')}</td>`,
  ]);
  const all = rows.length === 0 ? '' : actionForm(context.base, '/actions/replay-inbound', context.csrf, { principal }, `Replay every failed inbound webhook of ${principal}`);
  const query = `principal=${encodeURIComponent(principal)}&cursor=${encodeURIComponent(cursor)}`;
  const next = page.next === null ? '' : `<p><a id="inbound-next" href="${esc(`${context.base}/callbacks?${query}&inbound_cursor=${page.next.createdAt}.${page.next.seq}`)}">Older inbound webhooks</a></p>`;
  const list = table(['inbound message', 'from', 'to', 'url', 'attempts', 'last status', 'last error', 'received', ''], rows, 'No failed inbound webhook', 'inbound-webhook-list');
  return `<section class="wide" id="inbound-webhooks"><h2>Failed inbound webhooks</h2>${list}${all}${next}</section>`;
}

/**
 * `POST /actions/replay` of the form fields `principal` and `ref` (one report; '' for every
 * failed report of the principal), then back to the view under `base`.
 */
export async function replayAction(sms: SmsRouter, res: Response, base: string, principal: string, ref: string): Promise<void> {
  if (sms.storage.replayCallbacks === undefined) return refuse(res, 'NOT_SUPPORTED', 'This storage cannot replay delivery reports (no replayCallbacks)');
  if (principal === '') return refuse(res, 'VALIDATION_FAILED', 'principal: required');
  await sms.callbacks.replay(ref === '' ? { principalId: principal } : { principalId: principal, refs: [ref] });
  res.redirect(303, `${base}/callbacks?principal=${encodeURIComponent(principal)}&done=replayed`);
}

/**
 * `POST /actions/replay-inbound` of the form fields `principal` and `ref` (one inbound
 * webhook; '' for every failed one of the principal), then back to the view under `base`.
 */
export async function replayInboundAction(sms: SmsRouter, res: Response, base: string, principal: string, ref: string): Promise<void> {
  if (sms.storage.replayInboundWebhooks === undefined) return refuse(res, 'NOT_SUPPORTED', 'This storage cannot replay inbound webhooks (no replayInboundWebhooks)');
  if (principal === '') return refuse(res, 'VALIDATION_FAILED', 'principal: required');
  await sms.callbacks.replayInbound(ref === '' ? { principalId: principal } : { principalId: principal, refs: [ref] });
  res.redirect(303, `${base}/callbacks?principal=${encodeURIComponent(principal)}&done=replayed`);
}
