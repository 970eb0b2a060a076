/**
 * The console's one script: draws the overview's charts (the hour's and the day's traffic
 * and latency, the queue, the credit) with uPlot from the JSON the page
 * carries (`<script type="application/json" id="history">`), then fetches `history.json`
 * every 15 s and redraws, so the charts and counts stay live without a bundler or a
 * framework. Without JavaScript the page still shows every count as text.
 */
export const CHART_SCRIPT = `'use strict';
(function () {
  var holder = document.getElementById('history');
  if (!holder || typeof uPlot === 'undefined') return;
  var base = document.body.dataset.base;
  var charts = [];
  function width(el) { return Math.max(260, el.clientWidth); }
  function traffic(el, times, w) {
    if (el) charts.push(new uPlot({ width: width(el), height: 200, series: [{},
      { label: 'accepted', stroke: '#0969da' }, { label: 'submitted', stroke: '#8250df' },
      { label: 'delivered', stroke: '#1a7f37' }, { label: 'failed', stroke: '#cf222e' }] },
      [times, w.accepted, w.submitted, w.delivered, w.failed], el));
  }
  // Accept to submit (blue, left axis) is often milliseconds while submit to final (green,
  // right axis) is seconds: one shared axis would flatten the first. A step without a
  // latency is a gap; dots show a lone step between gaps.
  function latency(el, times, w) {
    var dot = { show: true, size: 4 };
    if (el) charts.push(new uPlot({ width: width(el), height: 180, series: [{},
      { label: 'accept-submit p50', stroke: '#0969da', scale: 'a', points: dot }, { label: 'p95', stroke: '#0969da', dash: [5, 4], scale: 'a', points: dot },
      { label: 'submit-final p50', stroke: '#1a7f37', scale: 'f', points: dot }, { label: 'p95', stroke: '#1a7f37', dash: [5, 4], scale: 'f', points: dot }],
      axes: [{}, { scale: 'a', stroke: '#0969da' }, { side: 1, scale: 'f', stroke: '#1a7f37', grid: { show: false } }] },
      [times, w.acceptToSubmit.p50, w.acceptToSubmit.p95, w.submitToFinal.p50, w.submitToFinal.p95], el));
  }
  function secs(x) {
    return x === null ? '-' : x < 1 ? Math.round(x * 1000) + ' ms' : x < 120 ? Math.round(x * 10) / 10 + ' s' : Math.round(x / 60) + ' min';
  }
  function latencyText(w, prefix) {
    ['acceptToSubmit', 'submitToFinal'].forEach(function (leg) {
      var el = document.getElementById(prefix + 'latency-' + leg);
      if (el) el.textContent = secs(w[leg].all.p50) + ' / ' + secs(w[leg].all.p95);
    });
  }
  function draw(h) {
    charts.forEach(function (c) { c.destroy(); });
    charts = [];
    traffic(document.getElementById('chart-traffic'), h.minutes, h);
    latency(document.getElementById('chart-latency'), h.minutes, h);
    traffic(document.getElementById('chart-day-traffic'), h.day.starts, h.day);
    latency(document.getElementById('chart-day-latency'), h.day.starts, h.day);
    var queue = document.getElementById('chart-queue');
    if (queue) charts.push(new uPlot({ width: width(queue), height: 160, spanGaps: true, series: [{},
      { label: 'transactional', stroke: '#0969da' }, { label: 'bulk', stroke: '#8250df' },
      { label: 'oldest wait (s)', stroke: '#9a6700', scale: 's' }], axes: [{}, {}, { side: 1, scale: 's', grid: { show: false } }] },
      [h.minutes, h.queueTransactional, h.queueBulk, h.oldestWaitS], queue));
    var credit = document.getElementById('chart-credit');
    if (credit) charts.push(new uPlot({ width: width(credit), height: 160, series: [{}, { label: 'credit spent', stroke: '#9a6700', fill: 'rgba(154,103,0,.1)' }] },
      [h.minutes, h.creditSpent], credit));
    var sum = function (a) { return a.reduce(function (x, y) { return x + y; }, 0); };
    ['accepted', 'submitted', 'delivered', 'failed', 'creditSpent'].forEach(function (name) {
      var el = document.getElementById('total-' + name);
      if (el) el.textContent = String(sum(h[name]));
      var day = document.getElementById('day-total-' + name);
      if (day) day.textContent = String(sum(h.day[name]));
    });
    latencyText(h, '');
    latencyText(h.day, 'day-');
  }
  draw(JSON.parse(holder.textContent));
  setInterval(function () {
    fetch(base + '/history.json', { credentials: 'same-origin' }).then(function (r) { return r.ok ? r.json() : null; })
      .then(function (h) { if (h) draw(h); }, function () {});
  }, 15000);
  var resize;
  window.addEventListener('resize', function () { clearTimeout(resize); resize = setTimeout(function () { draw(JSON.parse(holder.textContent)); }, 200); });
})();
`;
