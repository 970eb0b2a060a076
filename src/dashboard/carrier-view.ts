/**
 * The console's `/carrier` view: each bind's state, TPS in use against its budget and its
 * window, from the adapter's own read-out (`DeliveryAdapter.status`) when it gives one,
 * with the last error and next try from the router's connection events; each route's state;
 * and the parts a second this process submitted.
 */
import type { BindStatus } from '../delivery/contract.js';
import type { BindState, CarrierPanel, CarrierWatch } from './carrier.js';
import { age, esc, table, td, time } from './html.js';
import type { ViewContext } from './views.js';

/** What a bind's state reads as, and whether it is a good one. */
const STATE_TEXT: Record<BindStatus['state'], [string, boolean]> = {
  bound: ['bound', true],
  connecting: ['connecting', false],
  reconnecting: ['down (reconnecting)', false],
  closed: ['closed', false],
};

/** A number to at most one decimal. */
const rate = (n: number): string => String(Math.round(n * 10) / 10);

/** The binds as the adapter reads them, with the events' error and next try. */
function statusRows(context: ViewContext, status: BindStatus[], events: Map<string, BindState>): string[][] {
  return status.map((b) => {
    const name = b.route === undefined ? b.bind : `${b.route}/${b.bind}`;
    const [text, good] = STATE_TEXT[b.state];
    const seen = events.get(name);
    const down = b.state !== 'bound' ? seen : undefined;
    return [
      td(name, 'mono'),
      `<td class="${good ? 'good' : 'bad'}" data-state="${b.state}">${esc(text)}</td>`,
      td(time(b.since)),
      td(age(context.now - b.since)),
      `<td data-tps="${b.tpsInUse}">${esc(b.submits ? `${rate(b.tpsInUse)} / ${b.tpsLimit === null ? 'unpaced' : rate(b.tpsLimit)}` : 'receives only')}</td>`,
      `<td data-in-flight="${b.inFlight}">${esc(b.submits ? `${b.inFlight} / ${b.window ?? 'none'}` : '-')}</td>`,
      td(down?.attempt ?? '-'),
      td(down?.error ?? '-'),
      td(time(down?.retryAt ?? null)),
    ];
  });
}

/** The binds as the connection events tell them, for an adapter without `status`. */
function eventRows(context: ViewContext, panel: CarrierPanel): string[][] {
  return panel.binds.map((b) => [
    td(b.name, 'mono'),
    `<td class="${b.state === 'bound' ? 'good' : 'bad'}" data-state="${b.state}">${b.state === 'bound' ? 'bound' : 'down (reconnecting)'}</td>`,
    td(time(b.since)),
    td(age(context.now - b.since)),
    td('-'),
    td('-'),
    td(b.attempt ?? '-'),
    td(b.error ?? '-'),
    td(time(b.retryAt)),
  ]);
}

/** `/carrier`: each bind and route, and the TPS in use. */
export function carrier(context: ViewContext, watch: CarrierWatch): string {
  const panel = watch.current();
  const status = context.sms.operator.carrierStatus();
  const rows = status === null ? eventRows(context, panel) : statusRows(context, status, new Map(panel.binds.map((b) => [b.name, b])));
  const binds = table(
    ['bind', 'state', 'since', 'for', 'TPS in use / limit', 'in flight / window', 'attempts', 'error', 'next try'],
    rows,
    'No connection yet: the carrier is starting.',
    'binds',
  );
  const routes = table(
    ['route', 'state', 'since', 'why', 'traffic goes to'],
    panel.routes.map((r) => [td(r.route, 'mono'), td(r.state, r.state === 'up' ? 'good' : 'bad'), td(time(r.since)), td(r.reason ?? '-'), td(r.via ?? (r.state === 'down' ? 'nowhere' : '-'))]),
    'No route event: a single carrier, or every route up since the start.',
    'routes',
  );
  const source =
    status === null
      ? 'This adapter gives no read-out of its binds (no <code>status()</code>): states are from its connection events, without TPS or window.'
      : 'Read from the adapter now. The TPS limit is the adapter\'s, shared by its binds; TPS in use is each bind\'s sends a second over the last 10 s.';
  return `<section class="wide" id="carrier-binds"><h2>Binds</h2>${binds}<p class="hint">${source}</p></section>
<section id="carrier-routes"><h2>Routes</h2>${routes}</section>
<section id="carrier-tps"><h2>Throughput</h2><ul class="counts"><li><b id="tps">${panel.tps}</b>parts/s submitted (last 10 s)</li></ul>
<p class="hint">What this process submitted, all binds together.</p></section>`;
}
